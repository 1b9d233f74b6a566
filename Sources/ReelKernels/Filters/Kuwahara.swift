
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
    /// 8-bit R, G and B planes, one after the other (`w·h` bytes each).
    private var rgb: [UInt8] = []
    private var out: [FloatPlane] = [FloatPlane(), FloatPlane(), FloatPlane()]

    func apply(to image: YUVImage, radius: Int, colour: KernelYCbCr = .bt601) {
        let r = max(1, radius)
        let w = image.width, h = image.height
        let pw = w + 2 * r
        if rgb.count < 3 * w * h { rgb = [UInt8](repeating: 0, count: 3 * w * h) }
        for plane in out { plane.resize(width: w, height: h) }
        // 8-bit RGB of every pixel.
        rgb.withUnsafeMutableBufferPointer { planes in
            let red = planes.baseAddress!, green = red + w * h, blue = green + w * h
            RGBGroup.forEach(width: w, height: h) { x, cy, count in
                var g = RGBGroup.load(image, x: x, cy: cy, count: count, colour)
                g.clamp()
                @inline(__always) func put(_ channel: Lanes8, _ plane: UnsafeMutablePointer<UInt8>, _ y: Int) {
                    let d = plane + y * w + x
                    for i in 0..<count { d[i] = UInt8(truncatingIfNeeded: Int(channel[i] * 255 + 0.5)) }
                }
                put(g.r0, red, 2 * cy); put(g.g0, green, 2 * cy); put(g.b0, blue, 2 * cy)
                put(g.r1, red, 2 * cy + 1); put(g.g1, green, 2 * cy + 1); put(g.b1, blue, 2 * cy + 1)
            }
        }
        // Column sums over the rows above (y−r…y) and below (y…y+r), of values and squares,
        // for 3 channels: 12 rows over the padded width, and their prefix sums along the row.
        // Flat memory read through pointers: no array access (bounds check, uniqueness check)
        // or allocation per pixel.
        let columns = UnsafeMutablePointer<Int>.allocate(capacity: 12 * pw)
        let prefix = UnsafeMutablePointer<Int>.allocate(capacity: 12 * (pw + 1))
        defer { columns.deallocate(); prefix.deallocate() }
        columns.initialize(repeating: 0, count: 12 * pw)
        prefix.initialize(repeating: 0, count: 12 * (pw + 1))
        @inline(__always) func clampRow(_ y: Int) -> Int { min(max(y, 0), h - 1) }
        func add(_ y: Int, window: Int, sign: Int) {
            let sy = clampRow(y)
            for c in 0..<3 {
                rgb.withUnsafeBufferPointer { src in
                    let row = src.baseAddress! + (c * h + sy) * w
                    let sums = columns + (window * 6 + c) * pw, squares = columns + (window * 6 + 3 + c) * pw
                    @inline(__always) func put(_ px: Int, _ v: Int) {
                        sums[px] += sign * v
                        squares[px] += sign * v * v
                    }
                    // The padding repeats the row's first and last values; the middle is the row.
                    let first = Int(row[0]), last = Int(row[w - 1])
                    for px in 0..<r { put(px, first) }
                    for x in 0..<w { put(r + x, Int(row[x])) }
                    for px in (r + w)..<pw { put(px, last) }
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
                let col = columns + q * pw, pre = prefix + q * (pw + 1)
                pre[0] = 0
                for px in 0..<pw { s += col[px]; pre[px + 1] = s }
            }
            let o0 = out[0], o1 = out[1], o2 = out[2]
            o0.withSamples { d0 in o1.withSamples { d1 in o2.withSamples { d2 in
                /// The sum over padded columns `from..<to` of prefix row `q`.
                @inline(__always) func sum(_ q: Int, _ from: Int, _ to: Int) -> Int {
                    let pre = prefix + q * (pw + 1)
                    return pre[to] - pre[from]
                }
                for x in 0..<w {
                    // Padded column of pixel x is x + r; left window x−r…x, right window x…x+r.
                    var best: Float = 100
                    var mean: (Float, Float, Float) = (0, 0, 0)
                    /// The square of rows `window` (0 above, 1 below) and columns `from..<to`:
                    /// its mean colour if its summed variance is the lowest so far.
                    @inline(__always) func consider(_ window: Int, _ from: Int, _ to: Int) {
                        var sigma2: Float = 0
                        var m: (Float, Float, Float) = (0, 0, 0)
                        for c in 0..<3 {
                            let total = Float(sum(window * 6 + c, from, to))
                            let squares = Float(sum(window * 6 + 3 + c, from, to))
                            let mc = total * scale
                            sigma2 += abs(squares * scale2 - mc * mc)
                            if c == 0 { m.0 = mc } else if c == 1 { m.1 = mc } else { m.2 = mc }
                        }
                        if sigma2 < best { best = sigma2; mean = m }
                    }
                    consider(0, x, x + r + 1)
                    consider(0, x + r, x + 2 * r + 1)
                    consider(1, x + r, x + 2 * r + 1)
                    consider(1, x, x + r + 1)
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
                g.store(image, x: x, cy: cy, count: count, colour)
            }
        } } }
    }
}
