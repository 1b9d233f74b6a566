/// `pixellate`: every `size`×`size` block, aligned to the picture's top-left corner (the last
/// row and column of blocks may be cut by the edges), takes its average colour.
///
/// Averages are linear, so they are taken on the planes: a block's luma is the mean of its
/// pixels' luma, its chroma the mean of its pixels' chroma samples (each pixel counting the
/// sample of its 2×2 block). A 2×2 block of the output then gets the mean of its four pixels'
/// block colours, as every kernel here subsamples. Alpha, if any, is averaged too.
///
/// Speed: sums run along each row's block spans (no division per pixel; `PixelLanes.byteSum`,
/// 16 bytes an instruction on x86-64), and means are written back a span at a time
/// (`PixelLanes.fill`). With an even size, every chroma sample's four pixels lie in
/// one block, so chroma is summed and written on the chroma planes themselves (a quarter of
/// the reads, and no per-sample lookup); the result is the same to the byte. An odd size takes
/// the general path, where the chroma write-back reads the block of each column from a table.
enum Pixellate {
    static func apply(to image: YUVImage, size: Int, scratch: inout [Int]) {
        let s = max(1, size)
        guard s > 1 else { return }
        if s % 2 == 0 {
            applyEven(to: image, size: s, scratch: &scratch)
        } else {
            applyGeneral(to: image, size: s, scratch: &scratch)
        }
    }

    /// Any size ≥ 2: chroma counted once per pixel.
    static func applyGeneral(to image: YUVImage, size s: Int, scratch: inout [Int]) {
        let w = image.width, h = image.height
        let bw = (w + s - 1) / s, bh = (h + s - 1) / s
        // Per block: sum of Y, U, V, A and the pixel count; then the block of each column.
        let fields = 5
        let needed = bw * bh * fields + w
        if scratch.count < needed { scratch = [Int](repeating: 0, count: needed) }
        scratch.withUnsafeMutableBufferPointer { buffer in
            let sums = buffer.baseAddress!
            let columnBlock = sums + bw * bh * fields
            sums.update(repeating: 0, count: bw * bh * fields)
            for x in 0..<w { columnBlock[x] = x / s }
            for y in 0..<h {
                let ry = image.y.row(y), ru = image.u.row(y / 2), rv = image.v.row(y / 2)
                let rowSums = sums + (y / s) * bw * fields
                for bx in 0..<bw {
                    let x0 = bx * s, x1 = min(w, x0 + s)
                    var sy = 0, su = 0, sv = 0
                    for x in x0..<x1 { sy += Int(ry[x]); su += Int(ru[x >> 1]); sv += Int(rv[x >> 1]) }
                    let p = rowSums + bx * fields
                    p[0] += sy; p[1] += su; p[2] += sv; p[4] += x1 - x0
                }
                if let ra = image.a?.row(y) {
                    for bx in 0..<bw {
                        let x0 = bx * s, x1 = min(w, x0 + s)
                        var sa = 0
                        for x in x0..<x1 { sa += Int(ra[x]) }
                        rowSums[bx * fields + 3] += sa
                    }
                } else {
                    for bx in 0..<bw { rowSums[bx * fields + 3] += 255 * (min(w, bx * s + s) - bx * s) }
                }
            }
            writeMeansAndLuma(image, size: s, sums: sums, blocksPerRow: bw, blocks: bw * bh, fields: fields)
            for cy in 0..<image.u.height {
                let ru = image.u.row(cy), rv = image.v.row(cy)
                let r0 = sums + (2 * cy / s) * bw * fields, r1 = sums + (min(2 * cy + 1, h - 1) / s) * bw * fields
                for cx in 0..<image.u.width {
                    let b0 = columnBlock[2 * cx] * fields, b1 = columnBlock[min(2 * cx + 1, w - 1)] * fields
                    let u = r0[b0 + 1] + r0[b1 + 1] + r1[b0 + 1] + r1[b1 + 1]
                    let v = r0[b0 + 2] + r0[b1 + 2] + r1[b0 + 2] + r1[b1 + 2]
                    ru[cx] = UInt8(truncatingIfNeeded: (u + 32) >> 6)
                    rv[cx] = UInt8(truncatingIfNeeded: (v + 32) >> 6)
                }
            }
        }
    }

    /// An even size: chroma summed on the chroma planes (each sample stands for its four pixels).
    static func applyEven(to image: YUVImage, size s: Int, scratch: inout [Int]) {
        let w = image.width, h = image.height, cw = image.u.width, half = s / 2
        let bw = (w + s - 1) / s, bh = (h + s - 1) / s
        let fields = 5  // per block: sum of Y, U, V, A (chroma ×4: per pixel) and the pixel count
        let needed = bw * bh * fields
        if scratch.count < needed { scratch = [Int](repeating: 0, count: needed) }
        scratch.withUnsafeMutableBufferPointer { buffer in
            let sums = buffer.baseAddress!
            sums.update(repeating: 0, count: needed)
            for y in 0..<h {
                let ry = image.y.row(y), ra = image.a?.row(y)
                let rowSums = sums + (y / s) * bw * fields
                for bx in 0..<bw {
                    let x0 = bx * s, x1 = min(w, x0 + s)
                    let sy = PixelLanes.byteSum(ry + x0, count: x1 - x0)
                    let sa = ra.map { PixelLanes.byteSum($0 + x0, count: x1 - x0) } ?? 255 * (x1 - x0)
                    let p = rowSums + bx * fields
                    p[0] += sy; p[3] += sa; p[4] += x1 - x0
                }
            }
            for cy in 0..<image.u.height {
                let ru = image.u.row(cy), rv = image.v.row(cy)
                let rowSums = sums + (2 * cy / s) * bw * fields
                for bx in 0..<bw {
                    let c0 = bx * half, c1 = min(cw, c0 + half)
                    let su = PixelLanes.byteSum(ru + c0, count: c1 - c0), sv = PixelLanes.byteSum(rv + c0, count: c1 - c0)
                    let p = rowSums + bx * fields
                    p[1] += 4 * su; p[2] += 4 * sv
                }
            }
            writeMeansAndLuma(image, size: s, sums: sums, blocksPerRow: bw, blocks: bw * bh, fields: fields)
            for cy in 0..<image.u.height {
                let ru = image.u.row(cy), rv = image.v.row(cy)
                let rowSums = sums + (2 * cy / s) * bw * fields
                for bx in 0..<bw {
                    let c0 = bx * half, n = min(cw, c0 + half) - c0, p = rowSums + bx * fields
                    PixelLanes.fill(ru + c0, UInt8(truncatingIfNeeded: (p[1] + 8) >> 4), count: n)
                    PixelLanes.fill(rv + c0, UInt8(truncatingIfNeeded: (p[2] + 8) >> 4), count: n)
                }
            }
        }
    }

    /// Turns each block's sums (Y, U, V, A, pixel count: `fields` apart) into means ×16, so
    /// that chroma averaging keeps a fraction, and writes every row's luma and alpha spans.
    private static func writeMeansAndLuma(_ image: YUVImage, size s: Int, sums: UnsafeMutablePointer<Int>,
                                          blocksPerRow bw: Int, blocks: Int, fields: Int) {
        for b in 0..<blocks {
            let p = sums + b * fields, n = p[4]
            for f in 0..<4 { p[f] = (p[f] * 16 + n / 2) / n }
        }
        let w = image.width
        for y in 0..<image.height {
            let ry = image.y.row(y), ra = image.a?.row(y)
            let rowSums = sums + (y / s) * bw * fields
            for bx in 0..<bw {
                let x0 = bx * s, n = min(w, x0 + s) - x0, p = rowSums + bx * fields
                PixelLanes.fill(ry + x0, UInt8(truncatingIfNeeded: (p[0] + 8) >> 4), count: n)
                ra.map { PixelLanes.fill($0 + x0, UInt8(truncatingIfNeeded: (p[3] + 8) >> 4), count: n) }
            }
        }
    }
}
