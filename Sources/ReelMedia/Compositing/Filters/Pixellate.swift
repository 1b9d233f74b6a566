import ReelKernels

/// `pixellate`: every `size`×`size` block, aligned to the picture's top-left corner (the last
/// row and column of blocks may be cut by the edges), takes its average colour.
///
/// Averages are linear, so they are taken on the planes: a block's luma is the mean of its
/// pixels' luma, its chroma the mean of its pixels' chroma samples (each pixel counting the
/// sample of its 2×2 block). A 2×2 block of the output then gets the mean of its four pixels'
/// block colours, as every kernel here subsamples. Alpha, if any, is averaged too.
enum Pixellate {
    static func apply(to image: YUVImage, size: Int, scratch: inout [Int]) {
        let s = max(1, size)
        guard s > 1 else { return }
        let w = image.width, h = image.height
        let bw = (w + s - 1) / s, bh = (h + s - 1) / s
        // Per block: sum of Y, U, V, A and the pixel count.
        let fields = 5
        if scratch.count < bw * bh * fields { scratch = [Int](repeating: 0, count: bw * bh * fields) }
        scratch.withUnsafeMutableBufferPointer { buffer in
            let sums = buffer.baseAddress!
            sums.update(repeating: 0, count: bw * bh * fields)
            for y in 0..<h {
                let ry = image.y.row(y), ru = image.u.row(y / 2), rv = image.v.row(y / 2), ra = image.a?.row(y)
                let rowBase = (y / s) * bw
                for x in 0..<w {
                    let b = (rowBase + x / s) * fields
                    sums[b] += Int(ry[x]); sums[b + 1] += Int(ru[x / 2]); sums[b + 2] += Int(rv[x / 2])
                    sums[b + 3] += Int(ra?[x] ?? 255); sums[b + 4] += 1
                }
            }
            // Block means, ×16 so that chroma averaging below keeps a fraction.
            for b in 0..<(bw * bh) {
                let p = sums + b * fields, n = p[4]
                for f in 0..<4 { p[f] = (p[f] * 16 + n / 2) / n }
            }
            @inline(__always) func mean(_ x: Int, _ y: Int, _ f: Int) -> Int { sums[((y / s) * bw + x / s) * fields + f] }
            for y in 0..<h {
                let ry = image.y.row(y), ra = image.a?.row(y)
                for x in 0..<w {
                    ry[x] = UInt8(truncatingIfNeeded: (mean(x, y, 0) + 8) >> 4)
                    ra?[x] = UInt8(truncatingIfNeeded: (mean(x, y, 3) + 8) >> 4)
                }
            }
            for cy in 0..<image.u.height {
                let ru = image.u.row(cy), rv = image.v.row(cy)
                let y0 = 2 * cy, y1 = min(2 * cy + 1, h - 1)
                for cx in 0..<image.u.width {
                    let x0 = 2 * cx, x1 = min(2 * cx + 1, w - 1)
                    let u = mean(x0, y0, 1) + mean(x1, y0, 1) + mean(x0, y1, 1) + mean(x1, y1, 1)
                    let v = mean(x0, y0, 2) + mean(x1, y0, 2) + mean(x0, y1, 2) + mean(x1, y1, 2)
                    ru[cx] = UInt8(truncatingIfNeeded: (u + 32) >> 6)
                    rv[cx] = UInt8(truncatingIfNeeded: (v + 32) >> 6)
                }
            }
        }
    }
}
