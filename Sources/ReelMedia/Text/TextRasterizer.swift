import CFreeType
import ReelCore
import ReelKernels

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
    /// Text is shaped with HarfBuzz (joined Arabic, Devanagari conjuncts, kerning) and each line
    /// is ordered by the Unicode bidi algorithm (Hebrew and Arabic run right to left).
    ///
    /// Font: the fontconfig match for `family` (e.g. "sans-serif", "DejaVu Serif"); a character the
    /// font lacks comes from the first font in fontconfig's sorted fallback list that has it.
    /// `pixelSize` is the em size in pixels. Colour emoji keep their own colours.
    ///
    /// - Returns: straight-alpha RGBA of exactly `width×height`: every pixel carries `color`'s
    ///   RGB (so resampling never bleeds a dark fringe) except where a colour glyph is drawn,
    ///   alpha = glyph coverage × `color.a`.
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

        var row = 0
        try image.pixels.withUnsafeMutableBufferPointer { buffer in
            var canvas = GlyphCanvas(pixels: buffer.baseAddress!, width: width, height: height, color: color)
            paragraphs: for paragraph in TextLayout.paragraphs(text) {
                let shaped = try ShapedParagraph(paragraph, faces: fonts(for: paragraph, family: family), pixelSize: pixelSize)
                for line in TextLayout.breakParagraph(paragraph, widths: shaped.widths, maxWidth: width) {
                    if row * lineHeight >= height { break paragraphs }   // this line and the rest are clipped away
                    let baseline = ascender + row * lineHeight
                    var pen = 0
                    for glyph in try shaped.glyphs(line: line) {
                        try draw(glyph, penX: pen, baseline: baseline, on: &canvas)
                        pen += glyph.xAdvance
                    }
                    row += 1
                }
            }
        }
        return image
    }

    /// Renders one shaped glyph with FreeType at its pen position (26.6) and composites it.
    func draw(_ glyph: TextShaper.Glyph, penX: Int, baseline: Int, on canvas: inout GlyphCanvas) throws {
        let font = glyph.face
        var flags = font.loadFlags | Int32(FT_LOAD_RENDER)
        if font.isBitmapOnly { flags |= Int32(FT_LOAD_COLOR) }
        let error = FT_Load_Glyph(font.face, glyph.glyph, flags)
        guard error == 0 else {
            throw TextRenderingError("cannot load glyph \(glyph.glyph) from \(font.file)", freeTypeError: error)
        }
        let slot = font.face.pointee.glyph!
        let bitmap = slot.pointee.bitmap
        guard let src = bitmap.buffer else { return }
        let x = (penX + glyph.xOffset + 32) >> 6
        let y = baseline - ((glyph.yOffset + 32) >> 6)
        let rows = Int(bitmap.rows), cols = Int(bitmap.width), pitch = Int(bitmap.pitch)
        switch bitmap.pixel_mode {
        case UInt8(FT_PIXEL_MODE_GRAY.rawValue):
            canvas.coverage(src, pitch: pitch, cols: cols, rows: rows,
                            left: x + Int(slot.pointee.bitmap_left), top: y - Int(slot.pointee.bitmap_top))
        case UInt8(FT_PIXEL_MODE_BGRA.rawValue):
            let s = font.bitmapScale
            canvas.colour(ColorGlyph.scaled(bgra: src, pitch: pitch, cols: cols, rows: rows, by: s),
                          left: x + Int((Double(slot.pointee.bitmap_left) * s).rounded()),
                          top: y - Int((Double(slot.pointee.bitmap_top) * s).rounded()))
        default:
            return   // 1-bit or LCD bitmaps are never requested
        }
    }

    /// Glyph advances and logical widths of one paragraph, for line breaking, and each line
    /// reshaped in visual order for drawing.
    struct ShapedParagraph {
        let codes: [UInt32]
        let faces: [FontFace]
        let levels: [UInt8]
        /// 26.6 advance per scalar: a cluster's advance on its first scalar, 0 on the others.
        var widths: [Int]
        let pixelSize: Double

        init(_ paragraph: [Unicode.Scalar], faces: [FontFace], pixelSize: Double) throws {
            codes = paragraph.map(\.value)
            self.faces = faces
            self.pixelSize = pixelSize
            levels = Bidi.paragraph(codes).levels
            widths = [Int](repeating: 0, count: paragraph.count)
            for run in TextShaper.runs(scalars: codes, faces: faces, levels: levels, in: codes.indices) {
                try run.face.setPixelSize(pixelSize)
                for glyph in TextShaper.shape(run, scalars: codes) { widths[glyph.cluster] += glyph.xAdvance }
            }
        }

        /// The glyphs of one line, left to right. Shaped again per line: a line break ends
        /// Arabic joining, and the bidi reordering (rule L2) is per line.
        func glyphs(line: Range<Int>) throws -> [TextShaper.Glyph] {
            let runs = TextShaper.runs(scalars: codes, faces: faces, levels: levels, in: line)
            var out: [TextShaper.Glyph] = []
            for k in Bidi.visualOrder(levels: runs.map(\.level)) {
                try runs[k].face.setPixelSize(pixelSize)
                out += TextShaper.shape(runs[k], scalars: codes)
            }
            return out
        }
    }

    // MARK: - Font selection

    /// Which font file serves each scalar of `text` and its glyph index there (0 = .notdef,
    /// i.e. no font had it). For tests and diagnostics.
    func fontUsage(text: String, family: String) throws -> [(scalar: Unicode.Scalar, file: String, glyphIndex: UInt32)] {
        let scalars = Array(text.unicodeScalars)
        return try zip(scalars, fonts(for: scalars, family: family)).map { ($0, $1.file, $1.glyphIndex($0)) }
    }

    /// The glyphs a line of `text` is drawn with, left to right: font file, glyph index and the
    /// logical index of the first scalar each draws. For tests and diagnostics.
    func shapedGlyphs(text: String, family: String, pixelSize: Double) throws -> [(file: String, glyph: UInt32, cluster: Int)] {
        let scalars = Array(text.unicodeScalars)
        let paragraph = try ShapedParagraph(scalars, faces: fonts(for: scalars, family: family), pixelSize: pixelSize)
        return try paragraph.glyphs(line: scalars.indices).map { ($0.face.file, $0.glyph, $0.cluster) }
    }

    /// The font for each scalar: its own fallback choice, except that combining marks stay in
    /// their base character's font when it has them, and invisible format characters (joiners,
    /// variation selectors) always do, so a cluster is shaped by one font.
    func fonts(for scalars: [Unicode.Scalar], family: String) throws -> [FontFace] {
        var out: [FontFace] = []
        out.reserveCapacity(scalars.count)
        for s in scalars {
            if let previous = out.last {
                let properties = s.properties
                if properties.isDefaultIgnorableCodePoint { out.append(previous); continue }
                let isMark = [.nonspacingMark, .spacingMark, .enclosingMark].contains(properties.generalCategory)
                if isMark && previous.glyphIndex(s) != 0 { out.append(previous); continue }
            }
            out.append(try face(for: s, family: family))
        }
        return out
    }

    func fallbackList(_ family: String) throws -> FontFallbackList {
        if let list = fallbackLists[family] { return list }
        let list = try FontFallbackList(config: config, family: family)
        fallbackLists[family] = list
        return list
    }

    func face(forCandidate c: FontFallbackList.Candidate) throws -> FontFace {
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
}
