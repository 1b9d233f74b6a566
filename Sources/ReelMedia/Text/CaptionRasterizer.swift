import ReelCore
import ReelKernels

/// Burned-in caption blocks: the cue text shaped and laid out as text overlays are (HarfBuzz,
/// bidi order, fontconfig fallback, colour emoji), but centred line by line, wrapped to the
/// style's width, each line on its own background box, with an optional outline, and each
/// character painted in the highlight colour once the highlight has reached it.
extension TextRasterizer {
    /// A laid-out caption: straight-alpha RGBA, transparent outside the line boxes and glyphs.
    ///
    /// - Parameters:
    ///   - text: the block's text, lines separated by `"\n"`.
    ///   - lit: per Unicode scalar of `text`, whether it is painted in `highlight`.
    ///   - scale: render → output pixels (text is drawn at output resolution).
    ///   - maxWidth: the widest the block may be, in output pixels.
    func renderCaption(_ text: String, lit: [Bool], style: PlannedCaptionStyle, highlight: RGBAColor?,
                       scale: Double, maxWidth: Int) throws -> RGBAImage {
        let pixelSize = style.fontSize * scale
        let primary = try face(forCandidate: try fallbackList(style.font).candidates[0])
        try primary.setPixelSize(pixelSize)
        let metrics = primary.face.pointee.size.pointee.metrics
        let ascender = Int((metrics.ascender + 32) >> 6)
        let lineHeight = max(Int((metrics.height + 32) >> 6), Int(pixelSize.rounded(.up)))
        let padX = Int((pixelSize * 0.3).rounded(.up)), padY = Int((pixelSize * 0.1).rounded(.up))
        let outline = style.outlineWidth * scale
        let edge = Int(outline.rounded(.up))
        let textWidth = max(1, maxWidth - 2 * (padX + edge))

        // Lay out: every paragraph shaped and broken into lines; each line's glyphs, width
        // (26.6) and the offset of its paragraph in `text`.
        struct Line { var glyphs: [TextShaper.Glyph]; var width: Int; var paragraphStart: Int }
        var lines: [Line] = []
        var paragraphStart = 0
        for paragraph in TextLayout.paragraphs(text) {
            defer { paragraphStart += paragraph.count + 1 }
            guard !paragraph.isEmpty else { continue }
            let shaped = try ShapedParagraph(paragraph, faces: fonts(for: paragraph, family: style.font), pixelSize: pixelSize)
            for range in TextLayout.breakParagraph(paragraph, widths: shaped.widths, maxWidth: textWidth) where !range.isEmpty {
                let glyphs = try shaped.glyphs(line: range)
                lines.append(Line(glyphs: glyphs, width: glyphs.reduce(0) { $0 + $1.xAdvance }, paragraphStart: paragraphStart))
            }
        }
        let widest = ((lines.map(\.width).max() ?? 0) + 63) / 64
        // Even sizes: the block's chroma then sits on the frame's 4:2:0 grid.
        let width = max(2, min(maxWidth & ~1, (widest + 2 * (padX + edge) + 1) & ~1))
        let height = max(2, (lines.count * lineHeight + 2 * (padY + edge) + 1) & ~1)

        // Glyphs go into two layers (plain and highlighted), each in its own colour; colour
        // glyphs (emoji) keep their colours in whichever layer their character belongs to.
        var plain = RGBAImage(width: width, height: height), bright = RGBAImage(width: width, height: height)
        fill(&plain, rgb: style.color)
        fill(&bright, rgb: highlight ?? style.color)
        var boxes: [(x0: Int, y0: Int, x1: Int, y1: Int)] = []
        try plain.pixels.withUnsafeMutableBufferPointer { p in
            try bright.pixels.withUnsafeMutableBufferPointer { b in
                let opaque = { (c: RGBAColor) in RGBAColor(r: c.r, g: c.g, b: c.b, a: 255) }
                var plainCanvas = GlyphCanvas(pixels: p.baseAddress!, width: width, height: height, color: opaque(style.color))
                var brightCanvas = GlyphCanvas(pixels: b.baseAddress!, width: width, height: height, color: opaque(highlight ?? style.color))
                for (row, line) in lines.enumerated() {
                    let lineWidth = (line.width + 63) / 64
                    let left = (width - lineWidth) / 2
                    let top = edge + padY + row * lineHeight
                    // Boxes are centred like their lines, and the first and last reach the block's edges.
                    boxes.append((left - padX, top - (row == 0 ? padY : 0), width - (left - padX),
                                  row == lines.count - 1 ? height - edge : top + lineHeight))
                    var pen = left * 64
                    for glyph in line.glyphs {
                        let index = line.paragraphStart + glyph.cluster
                        if index < lit.count && lit[index] {
                            try draw(glyph, penX: pen, baseline: top + ascender, on: &brightCanvas)
                        } else {
                            try draw(glyph, penX: pen, baseline: top + ascender, on: &plainCanvas)
                        }
                        pen += glyph.xAdvance
                    }
                }
            }
        }

        var out = RGBAImage(width: width, height: height)
        if style.backgroundColor.a > 0 {
            for box in boxes {
                for y in max(0, box.y0)..<min(height, box.y1) {
                    for x in max(0, box.x0)..<min(width, box.x1) {
                        let k = (y * width + x) * 4
                        out.pixels[k] = style.backgroundColor.r; out.pixels[k + 1] = style.backgroundColor.g
                        out.pixels[k + 2] = style.backgroundColor.b; out.pixels[k + 3] = style.backgroundColor.a
                    }
                }
            }
        }
        if outline > 0 && style.outlineColor.a > 0 {
            let mask = Self.dilated(alpha: (0..<(width * height)).map { max(plain.pixels[$0 * 4 + 3], bright.pixels[$0 * 4 + 3]) },
                                    width: width, height: height, radius: outline)
            var ring = RGBAImage(width: width, height: height)
            fill(&ring, rgb: style.outlineColor)
            for i in 0..<(width * height) { ring.pixels[i * 4 + 3] = mask[i] }
            Self.over(ring, opacity: style.outlineColor.a, onto: &out)
        }
        Self.over(plain, opacity: style.color.a, onto: &out)
        Self.over(bright, opacity: (highlight ?? style.color).a, onto: &out)
        return out
    }

    private func fill(_ image: inout RGBAImage, rgb color: RGBAColor) {
        image.pixels.withUnsafeMutableBufferPointer { p in
            for k in Swift.stride(from: 0, to: p.count, by: 4) { p[k] = color.r; p[k + 1] = color.g; p[k + 2] = color.b }
        }
    }

    /// `layer` composited source-over onto `dest` (both straight alpha), its alpha scaled by `opacity`.
    static func over(_ layer: RGBAImage, opacity: UInt8, onto dest: inout RGBAImage) {
        let o = Double(opacity) / 255
        for i in 0..<(layer.width * layer.height) {
            let k = i * 4
            let sa = Double(layer.pixels[k + 3]) / 255 * o
            guard sa > 0 else { continue }
            let da = Double(dest.pixels[k + 3]) / 255
            let outA = sa + da * (1 - sa)
            for c in 0..<3 {
                let value = (Double(layer.pixels[k + c]) * sa + Double(dest.pixels[k + c]) * da * (1 - sa)) / outA
                dest.pixels[k + c] = UInt8(max(0, min(255, value.rounded())))
            }
            dest.pixels[k + 3] = UInt8(max(0, min(255, (outA * 255).rounded())))
        }
    }

    /// The outline's coverage: each pixel the largest coverage within `radius` of it, fading
    /// over the last pixel of the radius so the outline's edge is antialiased.
    static func dilated(alpha: [UInt8], width: Int, height: Int, radius: Double) -> [UInt8] {
        let reach = Int(radius.rounded(.up))
        var offsets: [(dx: Int, dy: Int, weight: Double)] = []
        for dy in -reach...reach {
            for dx in -reach...reach {
                let weight = min(1, max(0, radius + 0.5 - (Double(dx * dx + dy * dy)).squareRoot()))
                if weight > 0 { offsets.append((dx, dy, weight)) }
            }
        }
        var out = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                var best = 0.0
                for o in offsets {
                    let sx = x + o.dx, sy = y + o.dy
                    guard sx >= 0, sx < width, sy >= 0, sy < height else { continue }
                    best = max(best, Double(alpha[sy * width + sx]) * o.weight)
                    if best >= 255 { break }
                }
                out[y * width + x] = UInt8(best.rounded())
            }
        }
        return out
    }
}
