import CFreeType
import ReelCore

/// Rasterises text overlays with FreeType, finding fonts (and per-character fallbacks) through
/// fontconfig, so a Chinese caption in a Latin family still renders as Chinese.
///
/// Owns a fontconfig configuration, an `FT_Library` and the faces it opens; faces and fallback
/// lists are cached across calls. Used from one thread at a time (`@unchecked Sendable` so an
/// owner can move it between tasks); FreeType objects are not thread-safe.
public final class TextRasterizer: @unchecked Sendable {
    private let library: FT_Library
    private let config: OpaquePointer
    private var faces: [String: FontFace] = [:]
    private var fallbackLists: [String: FontFallbackList] = [:]
    private var faceForScalar: [String: [Unicode.Scalar: FontFace]] = [:]

    public init() throws {
        guard let config = FcInitLoadConfigAndFonts() else { throw TextRenderingError("fontconfig failed to load its configuration") }
        var library: FT_Library?
        let error = FT_Init_FreeType(&library)
        guard error == 0, let library else {
            FcConfigDestroy(config)
            throw TextRenderingError("cannot initialise FreeType", freeTypeError: error)
        }
        self.config = config
        self.library = library
    }

    deinit {
        // Faces belong to the library: release them before it.
        faceForScalar.removeAll()
        faces.removeAll()
        fallbackLists.removeAll()
        FT_Done_FreeType(library)
        FcConfigDestroy(config)
    }

    /// Lays `text` out inside a `width×height` box: left-aligned, wrapped at word boundaries (and
    /// anywhere between CJK ideographs), explicit "\n" honoured, lines that do not fit clipped.
    ///
    /// Font: the fontconfig match for `family` (e.g. "sans-serif", "DejaVu Serif"); a character the
    /// font lacks comes from the first font in fontconfig's sorted fallback list that has it.
    /// `pixelSize` is the em size in pixels.
    ///
    /// - Returns: straight-alpha RGBA of exactly `width×height`: every pixel carries `color`'s
    ///   RGB (so resampling never bleeds a dark fringe), alpha = glyph coverage × `color.a`.
    public func render(text: String, family: String, pixelSize: Double, color: RGBAColor, width: Int, height: Int) throws -> RGBAImage {
        precondition(width > 0 && height > 0, "text box must be non-empty, got \(width)x\(height)")
        var image = RGBAImage(width: width, height: height)
        image.pixels.withUnsafeMutableBufferPointer { p in
            for k in Swift.stride(from: 0, to: p.count, by: 4) { p[k] = color.r; p[k + 1] = color.g; p[k + 2] = color.b }
        }
        guard pixelSize > 0, !text.isEmpty else { return image }

        let primary = try face(forCandidate: try fallbackList(family).candidates[0])
        try primary.setPixelSize(pixelSize)
        let metrics = primary.face.pointee.size.pointee.metrics
        let ascender = Int((metrics.ascender + 32) >> 6)
        let lineHeight = max(Int((metrics.height + 32) >> 6), Int(pixelSize.rounded(.up)))

        let lines = try TextLayout.lines(text, maxWidth: width) { scalar in
            let font = try self.face(for: scalar, family: family)
            try font.setPixelSize(pixelSize)
            return try Self.loadGlyph(font, scalar, render: false).pointee.advance.x
        }

        let alphaScale = Int(color.a)
        try image.pixels.withUnsafeMutableBufferPointer { buffer in
            let out = buffer.baseAddress!
            for (row, line) in lines.enumerated() {
                let baseline = ascender + row * lineHeight
                if row * lineHeight >= height { break }   // this line and the rest are clipped away
                for placed in line where !TextLayout.isSpace(placed.scalar) {
                    let font = try face(for: placed.scalar, family: family)
                    try font.setPixelSize(pixelSize)
                    let slot = try Self.loadGlyph(font, placed.scalar, render: true)
                    let bitmap = slot.pointee.bitmap
                    guard bitmap.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue), let src = bitmap.buffer else { continue }
                    let left = ((placed.x + 32) >> 6) + Int(slot.pointee.bitmap_left)
                    let top = baseline - Int(slot.pointee.bitmap_top)
                    let rows = Int(bitmap.rows), cols = Int(bitmap.width), pitch = Int(bitmap.pitch)
                    // Clip the glyph box to the image once, then copy without per-pixel checks.
                    let y0 = max(0, -top), y1 = min(rows, height - top)
                    let x0 = max(0, -left), x1 = min(cols, width - left)
                    if y0 >= y1 || x0 >= x1 { continue }
                    for gy in y0..<y1 {
                        let s = src + gy * pitch
                        let d = out + ((top + gy) * width + left) * 4 + 3
                        for gx in x0..<x1 {
                            let a = UInt8(truncatingIfNeeded: (Int(s[gx]) * alphaScale + 127) / 255)
                            if a > d[gx * 4] { d[gx * 4] = a }
                        }
                    }
                }
            }
        }
        return image
    }

    // MARK: - Font selection

    /// Which font file serves each scalar of `text` and its glyph index there (0 = .notdef,
    /// i.e. no font had it). For tests and diagnostics.
    func fontUsage(text: String, family: String) throws -> [(scalar: Unicode.Scalar, file: String, glyphIndex: UInt32)] {
        try text.unicodeScalars.map { s in
            let font = try face(for: s, family: family)
            return (s, font.file, font.glyphIndex(s))
        }
    }

    private func fallbackList(_ family: String) throws -> FontFallbackList {
        if let list = fallbackLists[family] { return list }
        let list = try FontFallbackList(config: config, family: family)
        fallbackLists[family] = list
        return list
    }

    private func face(forCandidate c: FontFallbackList.Candidate) throws -> FontFace {
        let key = "\(c.file)#\(c.index)"
        if let face = faces[key] { return face }
        let face = try FontFace(library: library, file: c.file, index: c.index)
        faces[key] = face
        return face
    }

    /// The first font in the family's fallback list whose charset has `scalar` and whose cmap
    /// maps it; the primary font (drawing .notdef) when none does.
    private func face(for scalar: Unicode.Scalar, family: String) throws -> FontFace {
        if let face = faceForScalar[family]?[scalar] { return face }
        let list = try fallbackList(family)
        var chosen: FontFace? = nil
        for candidate in list.candidates {
            if let cs = candidate.charset, FcCharSetHasChar(cs, FcChar32(scalar.value)) == FcFalse { continue }
            let face = try face(forCandidate: candidate)
            if face.glyphIndex(scalar) != 0 { chosen = face; break }
        }
        let face = try chosen ?? face(forCandidate: list.candidates[0])
        faceForScalar[family, default: [:]][scalar] = face
        return face
    }

    private static func loadGlyph(_ font: FontFace, _ scalar: Unicode.Scalar, render: Bool) throws -> FT_GlyphSlot {
        // Outlines only: CJK fonts embed bitmap strikes whose 1-bit glyphs would look jagged.
        var flags = Int32(FT_LOAD_DEFAULT) | Int32(FT_LOAD_NO_BITMAP)
        if render { flags |= Int32(FT_LOAD_RENDER) }
        let error = FT_Load_Glyph(font.face, font.glyphIndex(scalar), flags)
        guard error == 0 else {
            throw TextRenderingError("cannot load glyph U+\(String(scalar.value, radix: 16, uppercase: true)) from \(font.file)", freeTypeError: error)
        }
        return font.face.pointee.glyph
    }
}
