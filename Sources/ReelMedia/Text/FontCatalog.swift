import CFreeType

/// A FreeType or fontconfig failure, with the library's own message when it has one.
public struct TextRenderingError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ what: String, freeTypeError error: FT_Error? = nil) {
        if let error {
            let message = FT_Error_String(error).map { String(cString: $0) } ?? "FreeType error \(error)"
            description = "\(what): \(message)"
        } else {
            description = what
        }
    }
}

/// One opened font file face. Owns its `FT_Face` and the HarfBuzz font shaping with it; the
/// `FT_Library` it came from must outlive it (the `TextRasterizer` that creates faces keeps both
/// and releases faces first).
///
/// Outline fonts are sized with `FT_Set_Char_Size`. Bitmap-only fonts (Noto Color Emoji: one
/// 109 px strike of colour PNG glyphs) cannot be sized freely: the nearest strike is selected and
/// `bitmapScale` says how much to scale its advances and bitmaps to reach the requested size.
final class FontFace {
    let face: FT_Face
    let file: String
    let index: Int
    /// True for bitmap-only fonts (no outlines), e.g. colour emoji.
    let isBitmapOnly: Bool
    /// Requested pixel size ÷ selected strike size; 1 for outline fonts.
    private(set) var bitmapScale: Double = 1
    /// The size last set with `setPixelSize`, to skip redundant FreeType calls.
    private var pixelSize26: FT_F26Dot6 = -1
    /// HarfBuzz's view of `face` (`hb_font_t`), created on first use; it reads FreeType's
    /// current size, so `setPixelSize` tells it when that changes.
    private var shapingFont: OpaquePointer?

    init(library: FT_Library, file: String, index: Int) throws {
        var face: FT_Face?
        let error = FT_New_Face(library, file, FT_Long(index), &face)
        guard error == 0, let face else { throw TextRenderingError("cannot open font \(file)#\(index)", freeTypeError: error) }
        self.face = face
        self.file = file
        self.index = index
        let flags = face.pointee.face_flags
        isBitmapOnly = flags & FT_Long(FT_FACE_FLAG_SCALABLE) == 0 && face.pointee.num_fixed_sizes > 0
    }

    deinit {
        if let shapingFont { hb_font_destroy(shapingFont) }   // drops its reference to `face`
        FT_Done_Face(face)
    }

    func glyphIndex(_ scalar: Unicode.Scalar) -> UInt32 { UInt32(FT_Get_Char_Index(face, FT_ULong(scalar.value))) }

    /// FreeType load flags for glyph `render`ing and measuring. Outlines only for outline fonts:
    /// CJK fonts embed bitmap strikes whose 1-bit glyphs would look jagged. Colour bitmaps for
    /// bitmap-only fonts.
    var loadFlags: Int32 {
        isBitmapOnly ? Int32(FT_LOAD_DEFAULT) | Int32(FT_LOAD_COLOR) : Int32(FT_LOAD_DEFAULT) | Int32(FT_LOAD_NO_BITMAP)
    }

    /// The HarfBuzz font for this face at its current size.
    var hbFont: OpaquePointer {
        if let shapingFont { return shapingFont }
        let font = hb_ft_font_create_referenced(face)!
        // The same (hinted) advances FreeType gives when the glyphs are drawn.
        hb_ft_font_set_load_flags(font, loadFlags)
        shapingFont = font
        return font
    }

    /// Sets the em size in (possibly fractional) pixels: 26.6 points at 72 dpi are pixels.
    func setPixelSize(_ pixels: Double) throws {
        let size = FT_F26Dot6((pixels * 64).rounded())
        guard size != pixelSize26 else { return }
        if isBitmapOnly {
            // The smallest strike at least as large as requested (downscaling looks best), else the largest.
            let strikes = (0..<Int(face.pointee.num_fixed_sizes)).map { (index: $0, ppem: Double(face.pointee.available_sizes[$0].y_ppem) / 64) }
            let chosen = strikes.filter { $0.ppem >= pixels }.min { $0.ppem < $1.ppem } ?? strikes.max { $0.ppem < $1.ppem }!
            let error = FT_Select_Size(face, FT_Int(chosen.index))
            guard error == 0 else { throw TextRenderingError("cannot select the \(chosen.ppem) px strike of \(file)", freeTypeError: error) }
            bitmapScale = chosen.ppem > 0 ? pixels / chosen.ppem : 1
        } else {
            let error = FT_Set_Char_Size(face, 0, size, 72, 72)
            guard error == 0 else { throw TextRenderingError("cannot size font \(file) to \(pixels) px", freeTypeError: error) }
        }
        pixelSize26 = size
        if let shapingFont { hb_ft_font_changed(shapingFont) }
    }
}

/// The fonts fontconfig offers for one family request, best first (FcFontSort), with their
/// character sets, so each character can go to the first font that really has it.
/// Owns the `FcFontSet`.
final class FontFallbackList {
    struct Candidate {
        let file: String
        let index: Int
        let charset: OpaquePointer?   // FcCharSet*, owned by the font set
    }
    let candidates: [Candidate]
    private let fontSet: UnsafeMutablePointer<FcFontSet>

    init(config: OpaquePointer, family: String) throws {
        guard let pattern = FcNameParse(family) else { throw TextRenderingError("fontconfig cannot parse family \"\(family)\"") }
        defer { FcPatternDestroy(pattern) }
        FcConfigSubstitute(config, pattern, FcMatchPattern)
        FcDefaultSubstitute(pattern)
        var result = FcResultMatch
        // trim = true: drop fonts that add no characters to the ones before them.
        guard let set = FcFontSort(config, pattern, FcTrue, nil, &result), set.pointee.nfont > 0 else {
            throw TextRenderingError("fontconfig found no font for \"\(family)\"")
        }
        fontSet = set
        var list: [Candidate] = []
        for k in 0..<Int(set.pointee.nfont) {
            guard let font = set.pointee.fonts[k] else { continue }
            var file: UnsafeMutablePointer<FcChar8>?
            guard FcPatternGetString(font, "file", 0, &file) == FcResultMatch, let file else { continue }
            var index: Int32 = 0
            _ = FcPatternGetInteger(font, "index", 0, &index)
            var charset: OpaquePointer?
            _ = FcPatternGetCharSet(font, "charset", 0, &charset)
            list.append(Candidate(file: String(cString: file), index: Int(index), charset: charset))
        }
        guard !list.isEmpty else { FcFontSetDestroy(set); throw TextRenderingError("fontconfig returned no font files for \"\(family)\"") }
        candidates = list
    }

    deinit { FcFontSetDestroy(fontSet) }
}
