
/// `kuwahara`, as GPUImage's: around each pixel, the four (radius+1)×(radius+1) squares that
/// have the pixel as a corner (up-left, up-right, down-right, down-left); the pixel takes the
/// mean colour of the square whose summed per-channel variance is lowest (the first such
/// square in that order on a tie). Edge pixels repeat beyond the picture.
///
/// GPUImage samples 8-bit texture values; so does this kernel, on the 8-bit 0…255 RGB of
/// each pixel, which keeps every window sum an exact integer. Window sums are running sums
/// (per column over the window's rows, then prefix sums along the row), so the cost per
/// pixel does not grow with the radius.
final class Kuwahara {
    private var rgb: [[UInt8]] = [[], [], []]
    private var out: [FloatPlane] = [FloatPlane(), FloatPlane(), FloatPlane()]

    func apply(to image: YUVImage, radius: Int) {
        let r = max(1, radius)
        let w = image.width, h = image.height
        let pw = w + 2 * r
        for c in 0..<3 where rgb[c].count < w * h { rgb[c] = [UInt8](repeating: 0, count: w * h) }
        for plane in out { plane.resize(width: w, height: h) }
        // 8-bit RGB of every pixel.
        RGBGroup.forEach(width: w, height: h) { x, cy, count in
            var g = RGBGroup.load(image, x: x, cy: cy, count: count)
            g.clamp()
            for (k, (row, channel)) in [(0, g.r0), (0, g.g0), (0, g.b0), (1, g.r1), (1, g.g1), (1, g.b1)].enumerated() {
                let c = k % 3, y = 2 * cy + row
                for i in 0..<count { rgb[c][y * w + x + i] = UInt8(truncatingIfNeeded: Int(channel[i] * 255 + 0.5)) }
            }
        }
        // Column sums over the rows above (y−r…y) and below (y…y+r), of values and squares,
        // for 3 channels: 12 arrays over the padded width.
        var columns = [[Int]](repeating: [Int](repeating: 0, count: pw), count: 12)
        var prefix = [[Int]](repeating: [Int](repeating: 0, count: pw + 1), count: 12)
        @inline(__always) func clampRow(_ y: Int) -> Int { min(max(y, 0), h - 1) }
        func add(_ y: Int, window: Int, sign: Int) {
            let sy = clampRow(y)
            for c in 0..<3 {
                let src = rgb[c]
                let base = sy * w
                for px in 0..<pw {
                    let v = Int(src[base + min(max(px - r, 0), w - 1)])
                    columns[window * 6 + c][px] += sign * v
                    columns[window * 6 + 3 + c][px] += sign * v * v
                }
            }
        }
        for j in -r...0 { add(j, window: 0, sign: 1) }
        for j in 0...r { add(j, window: 1, sign: 1) }
        let n = Float((r + 1) * (r + 1))
        let scale = 1 / (255 * n), scale2 = 1 / (255 * 255 * n)
        for y in 0..<h {
            if y > 0 {
                add(y, window: 0, sign: 1); add(y - r - 1, window: 0, sign: -1)
                add(y + r, window: 1, sign: 1); add(y - 1, window: 1, sign: -1)
            }
            for q in 0..<12 {
                var s = 0
                prefix[q][0] = 0
                for px in 0..<pw { s += columns[q][px]; prefix[q][px + 1] = s }
            }
            let o0 = out[0], o1 = out[1], o2 = out[2]
            o0.withSamples { d0 in o1.withSamples { d1 in o2.withSamples { d2 in
                for x in 0..<w {
                    // Padded column of pixel x is x + r; left window x−r…x, right window x…x+r.
                    let left = (x, x + r + 1), right = (x + r, x + 2 * r + 1)
                    var best: Float = 100
                    var mean: (Float, Float, Float) = (0, 0, 0)
                    for (window, span) in [(0, left), (0, right), (1, right), (1, left)] {
                        var sigma2: Float = 0
                        var m: (Float, Float, Float) = (0, 0, 0)
                        for c in 0..<3 {
                            let sum = Float(prefix[window * 6 + c][span.1] - prefix[window * 6 + c][span.0])
                            let squares = Float(prefix[window * 6 + 3 + c][span.1] - prefix[window * 6 + 3 + c][span.0])
                            let mc = sum * scale
                            sigma2 += abs(squares * scale2 - mc * mc)
                            if c == 0 { m.0 = mc } else if c == 1 { m.1 = mc } else { m.2 = mc }
                        }
                        if sigma2 < best { best = sigma2; mean = m }
                    }
                    d0[y * w + x] = mean.0; d1[y * w + x] = mean.1; d2[y * w + x] = mean.2
                }
            } } }
        }
        // Back to Y'CbCr through the group convention.
        out[0].withSamples { r0 in out[1].withSamples { g0 in out[2].withSamples { b0 in
            RGBGroup.forEach(width: w, height: h) { x, cy, count in
                @inline(__always) func lanes(_ p: UnsafeMutablePointer<Float>, _ y: Int) -> Lanes8 {
                    var v = Lanes8()
                    for i in 0..<count { v[i] = p[y * w + x + i] }
                    return v
                }
                let g = RGBGroup(r0: lanes(r0, 2 * cy), g0: lanes(g0, 2 * cy), b0: lanes(b0, 2 * cy),
                                 r1: lanes(r0, 2 * cy + 1), g1: lanes(g0, 2 * cy + 1), b1: lanes(b0, 2 * cy + 1))
                g.store(image, x: x, cy: cy, count: count)
            }
        } } }
    }
}
