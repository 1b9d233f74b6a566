import ReelCore

/// `chromaKey`: makes pixels whose chroma is near the key colour's transparent, as GPUImage's
/// chroma key filter does, and takes the key colour out of what remains (spill suppression).
///
/// GPUImage measures the distance between a pixel's (Cr, Cb) and the key's — BT.601 colour
/// differences Cr = 0.7132·(R − Y), Cb = 0.5647·(B − Y) — and multiplies the alpha by
/// `smoothstep(similarity, similarity + smoothness, distance)`. Here they are the picture's
/// own colour differences, Cr = (R − Y)/(2(1 − Kr)), Cb = (B − Y)/(2(1 − Kb)) with its
/// matrix's luma weights (BT.601's for an SD picture, as GPUImage): exactly its chroma samples,
/// `(Cr − 128)/224` and `(Cb − 128)/224`, so the key is computed once per chroma sample, and
/// its factor is interpolated bilinearly (chroma sites are centred) up to the luma-resolution
/// alpha.
///
/// Spill: the component of each sample's chroma along the key's chroma direction, where it
/// is positive, is reduced by the fraction `spill` (1 removes it): a green fringe turns grey,
/// while colours away from the key (skin, red, blue, greys) are untouched.
enum ChromaKeyKernel {
    static func apply(to image: YUVImage, color: RGBAColor, similarity: Double, smoothness: Double, spill: Double,
                      matrix: YCbCrMatrix = .smpte170M, scratch: inout [Float]) {
        guard let alpha = image.a else { return }
        let r = Double(color.r) / 255, g = Double(color.g) / 255, b = Double(color.b) / 255
        let k = matrix.lumaWeights ?? YCbCrMatrix.bt709.lumaWeights!
        let maskY = k.r * r + k.g * g + k.b * b
        let maskCr = Float((r - maskY) / (2 * (1 - k.r))), maskCb = Float((b - maskY) / (2 * (1 - k.b)))
        let length = (maskCr * maskCr + maskCb * maskCb).squareRoot()
        let dirCr = length > 0 ? maskCr / length : 0, dirCb = length > 0 ? maskCb / length : 0
        let e0 = Float(similarity), e1 = Float(similarity + smoothness)
        let sp = Float(spill)
        let cw = image.u.width, ch = image.u.height
        if scratch.count < cw * ch { scratch = [Float](repeating: 0, count: cw * ch) }
        scratch.withUnsafeMutableBufferPointer { keep in
            for cy in 0..<ch {
                let u = image.u.row(cy), v = image.v.row(cy)
                let k = keep.baseAddress! + cy * cw
                for cx in 0..<cw {
                    var cb = (Float(u[cx]) - 128) / 224, cr = (Float(v[cx]) - 128) / 224
                    let dr = cr - maskCr, db = cb - maskCb
                    k[cx] = smoothstep(e0, e1, (dr * dr + db * db).squareRoot())
                    if sp > 0 {
                        let along = cr * dirCr + cb * dirCb
                        if along > 0 {
                            cr -= sp * along * dirCr
                            cb -= sp * along * dirCb
                            u[cx] = code(128 + 224 * cb)
                            v[cx] = code(128 + 224 * cr)
                        }
                    }
                }
            }
            // Luma pixel x sits at chroma position x/2 − 1/4: weights 3/4 and 1/4 on the
            // nearest two samples, in each direction (clamped at the edges).
            let k = keep.baseAddress!
            for y in 0..<image.height {
                let cy = y / 2
                let cyOther = min(max(y % 2 == 0 ? cy - 1 : cy + 1, 0), ch - 1)
                let near = k + cy * cw, far = k + cyOther * cw
                let a = alpha.row(y)
                for x in 0..<image.width {
                    let cx = x / 2
                    let cxOther = min(max(x % 2 == 0 ? cx - 1 : cx + 1, 0), cw - 1)
                    let f = 0.5625 * near[cx] + 0.1875 * (near[cxOther] + far[cx]) + 0.0625 * far[cxOther]
                    a[x] = code(Float(a[x]) * f)
                }
            }
        }
    }

    /// GLSL's smoothstep; a step at `e0` when the edges meet.
    @inline(__always) static func smoothstep(_ e0: Float, _ e1: Float, _ x: Float) -> Float {
        guard e1 > e0 else { return x < e0 ? 0 : 1 }
        let t = min(max((x - e0) / (e1 - e0), 0), 1)
        return t * t * (3 - 2 * t)
    }

    @inline(__always) static func code(_ v: Float) -> UInt8 {
        UInt8(truncatingIfNeeded: Int(min(max(v, 0), 255) + 0.5))
    }
}
