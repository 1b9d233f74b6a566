import ReelCore
@testable import ReelKernels
@testable import ReelMedia

/// A deliberately naive compositor in Double, written from the documented semantics only:
/// pixel centres at +0.5, bilinear taps clamped to the crop, a one-dest-pixel coverage ramp
/// across each crop edge, chroma on the half-resolution grid with the 2×2 mean alpha,
/// source-over with straight alpha. The fast compositor must match it closely.
enum ReferenceCompositor {
    static func draw(_ source: YUVImage, transform: AffineTransform, opacity: Double, crop: Rect?, onto dest: YUVImage) -> [[UInt8]] {
        let inv = transform.inverted!
        let crop = crop ?? Rect(x: 0, y: 0, width: Double(source.width), height: Double(source.height))
        let alphaFull: [Double]? = source.a.map { TestImages.bytes($0).map { Double($0) / 255 } }
        var alphaHalf: [Double]? = nil
        if let alphaFull {
            let cw = source.u.width, ch = source.u.height, w = source.width, h = source.height
            var half = [Double](repeating: 0, count: cw * ch)
            for y in 0..<ch {
                for x in 0..<cw {
                    var s = 0.0
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        s += alphaFull[min(2 * y + dy, h - 1) * w + min(2 * x + dx, w - 1)]
                    }
                    half[y * cw + x] = s / 4
                }
            }
            alphaHalf = half
        }
        return [
            plane(source.y, lumaSize: (source.width, source.height), alpha: alphaFull, dest: dest.y, inv: inv, scale: 1, crop: crop, opacity: opacity),
            plane(source.u, lumaSize: (source.width, source.height), alpha: alphaHalf, dest: dest.u, inv: inv, scale: 0.5, crop: crop, opacity: opacity),
            plane(source.v, lumaSize: (source.width, source.height), alpha: alphaHalf, dest: dest.v, inv: inv, scale: 0.5, crop: crop, opacity: opacity),
        ]
    }

    static func plane(_ src: Plane, lumaSize: (Int, Int), alpha: [Double]?, dest: Plane, inv: AffineTransform, scale s: Double, crop: Rect, opacity: Double) -> [UInt8] {
        let sv = TestImages.bytes(src).map(Double.init)
        var out = TestImages.bytes(dest)
        let w = src.width, h = src.height
        // A crop that reaches the image edge reaches the (possibly odd-sized) plane's edge.
        let x0 = max(0, crop.x * s), x1 = crop.maxX >= Double(lumaSize.0) ? Double(w) : min(Double(w), crop.maxX * s)
        let y0 = max(0, crop.y * s), y1 = crop.maxY >= Double(lumaSize.1) ? Double(h) : min(Double(h), crop.maxY * s)
        let iMin = Int(x0.rounded(.down)), iMax = min(w - 1, Int(x1.rounded(.up)) - 1)
        let jMin = Int(y0.rounded(.down)), jMax = min(h - 1, Int(y1.rounded(.up)) - 1)
        let gx = (inv.a * inv.a + inv.c * inv.c).squareRoot(), gy = (inv.b * inv.b + inv.d * inv.d).squareRoot()
        func sample(_ values: [Double], _ sx: Double, _ sy: Double) -> Double {
            let u = sx - 0.5, v = sy - 0.5
            let fi = u.rounded(.down), fj = v.rounded(.down)
            let fx = u - fi, fy = v - fj
            func at(_ i: Int, _ j: Int) -> Double {
                values[min(max(j, jMin), jMax) * w + min(max(i, iMin), iMax)]
            }
            let i = Int(fi), j = Int(fj)
            return (at(i, j) * (1 - fx) + at(i + 1, j) * fx) * (1 - fy) + (at(i, j + 1) * (1 - fx) + at(i + 1, j + 1) * fx) * fy
        }
        for y in 0..<dest.height {
            for x in 0..<dest.width {
                let X = Double(x) + 0.5, Y = Double(y) + 0.5
                let sx = inv.a * X + inv.c * Y + inv.tx * s
                let sy = inv.b * X + inv.d * Y + inv.ty * s
                let cx = min(1, max(0, min(sx - x0, x1 - sx) / gx + 0.5))
                let cy = min(1, max(0, min(sy - y0, y1 - sy) / gy + 0.5))
                let cov = cx * cy
                if cov <= 0 { continue }
                let a = (alpha.map { sample($0, sx, sy) } ?? 1) * opacity * cov
                let c = sample(sv, sx, sy)
                let d = Double(out[y * dest.width + x])
                out[y * dest.width + x] = UInt8(max(0, min(255, (c * a + d * (1 - a)).rounded())))
            }
        }
        return out
    }
}
