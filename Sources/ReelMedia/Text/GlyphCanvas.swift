import ReelCore

/// The straight-alpha RGBA box text is drawn into: grey glyphs add coverage in the text colour,
/// colour glyphs (emoji) are composited over with their own colours. Everything is clipped to
/// the box. The pixels belong to the caller and must outlive the canvas.
struct GlyphCanvas {
    let pixels: UnsafeMutablePointer<UInt8>
    let width: Int
    let height: Int
    let color: RGBAColor

    /// An 8-bit coverage bitmap (FreeType grey) with its top-left corner at (`left`, `top`): each
    /// pixel's alpha becomes the larger of its alpha and coverage × the colour's alpha, as before
    /// shaping, so overlapping glyphs of one text never darken or double up.
    func coverage(_ src: UnsafeMutablePointer<UInt8>, pitch: Int, cols: Int, rows: Int, left: Int, top: Int) {
        let alphaScale = Int(color.a)
        // Clip the glyph box to the image once, then copy without per-pixel checks.
        let y0 = max(0, -top), y1 = min(rows, height - top)
        let x0 = max(0, -left), x1 = min(cols, width - left)
        if y0 >= y1 || x0 >= x1 { return }
        for gy in y0..<y1 {
            let s = src + gy * pitch
            let d = pixels + ((top + gy) * width + left) * 4 + 3
            for gx in x0..<x1 {
                let a = UInt8(truncatingIfNeeded: (Int(s[gx]) * alphaScale + 127) / 255)
                if a > d[gx * 4] { d[gx * 4] = a }
            }
        }
    }

    /// A colour glyph (premultiplied RGBA) composited over the box ("source over", straight
    /// alpha out), its alpha multiplied by the text colour's alpha.
    func colour(_ glyph: ColorGlyph, left: Int, top: Int) {
        let y0 = max(0, -top), y1 = min(glyph.height, height - top)
        let x0 = max(0, -left), x1 = min(glyph.width, width - left)
        if y0 >= y1 || x0 >= x1 { return }
        let opacity = Double(color.a) / 255
        for gy in y0..<y1 {
            for gx in x0..<x1 {
                let s = (gy * glyph.width + gx) * 4
                let sa = glyph.rgba[s + 3] * opacity
                if sa <= 0 { continue }
                let d = pixels + ((top + gy) * width + left + gx) * 4
                let da = Double(d[3]) / 255
                let outA = sa + da * (1 - sa)
                for c in 0..<3 {
                    // Premultiplied source (scaled by opacity) over straight destination.
                    let value = (glyph.rgba[s + c] * opacity + Double(d[c]) / 255 * da * (1 - sa)) / outA
                    d[c] = UInt8(max(0, min(255, (value * 255).rounded())))
                }
                d[3] = UInt8(max(0, min(255, (outA * 255).rounded())))
            }
        }
    }
}

/// A colour glyph bitmap resampled to the requested size: premultiplied RGBA in 0…1.
struct ColorGlyph {
    let width: Int
    let height: Int
    let rgba: [Double]

    /// Converts FreeType's premultiplied BGRA bitmap (a colour emoji strike) and scales it by
    /// `scale` with area averaging (each output pixel is the mean of the source area it covers),
    /// so a 109 px strike shrinks to caption size without aliasing.
    static func scaled(bgra src: UnsafeMutablePointer<UInt8>, pitch: Int, cols: Int, rows: Int, by scale: Double) -> ColorGlyph {
        let width = max(1, Int((Double(cols) * scale).rounded(.up)))
        let height = max(1, Int((Double(rows) * scale).rounded(.up)))
        let xs = weights(source: cols, target: width, scale: scale)
        let ys = weights(source: rows, target: height, scale: scale)
        var out = [Double](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                var acc = (0.0, 0.0, 0.0, 0.0), total = 0.0
                for (sy, wy) in ys[y] {
                    let line = src + sy * pitch
                    for (sx, wx) in xs[x] {
                        let w = wy * wx, p = line + sx * 4
                        acc.0 += Double(p[2]) * w; acc.1 += Double(p[1]) * w; acc.2 += Double(p[0]) * w; acc.3 += Double(p[3]) * w
                        total += w
                    }
                }
                guard total > 0 else { continue }
                let k = (y * width + x) * 4, n = total * 255
                out[k] = acc.0 / n; out[k + 1] = acc.1 / n; out[k + 2] = acc.2 / n; out[k + 3] = acc.3 / n
            }
        }
        return ColorGlyph(width: width, height: height, rgba: out)
    }

    /// For each target pixel, the source pixels its footprint [t/scale, (t+1)/scale) overlaps and
    /// by how much.
    private static func weights(source: Int, target: Int, scale: Double) -> [[(Int, Double)]] {
        (0..<target).map { t in
            let lo = Double(t) / scale, hi = Double(t + 1) / scale
            var list: [(Int, Double)] = []
            var s = Int(lo.rounded(.down))
            while Double(s) < hi && s < source {
                let overlap = min(hi, Double(s + 1)) - max(lo, Double(s))
                if s >= 0 && overlap > 0 { list.append((s, overlap)) }
                s += 1
            }
            return list
        }
    }
}
