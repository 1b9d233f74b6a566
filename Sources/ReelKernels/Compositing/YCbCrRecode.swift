import ReelCore

/// Re-encodes a picture's limited-range Y'CbCr from one matrix into another, in place, keeping
/// the R'G'B' it stands for: how a source that differs from the output only in its matrix (an
/// SD BT.601 clip in a BT.709 edit) enters the compositor, with no chroma resampling.
///
/// Each pixel's luma is taken with its 2×2 block's chroma, as the kernels read pixels; chroma
/// is mapped block by block (grey stays grey, so chroma depends on chroma alone). The map is
/// linear about (16, 128, 128), so transparent black stays transparent black. One round trip
/// costs at most one code value of rounding per plane.
public struct YCbCrRecode: Sendable, Hashable {
    // ×65536: luma += yU·(Cb−128) + yV·(Cr−128); Cb−128 ← uU·(Cb−128) + uV·(Cr−128); Cr likewise.
    private let yU: Int, yV: Int, uU: Int, uV: Int, vU: Int, vV: Int
    /// The two matrices have the same coefficients: `apply` does nothing.
    public let isIdentity: Bool

    /// From `source`'s Y'CbCr to `target`'s. Matrices without luma weights (identity, YCgCo)
    /// count as BT.709, as in `ColorConversion`.
    public init(from source: YCbCrMatrix, to target: YCbCrMatrix) {
        let a = source.lumaWeights ?? YCbCrMatrix.bt709.lumaWeights!
        let b = target.lumaWeights ?? YCbCrMatrix.bt709.lumaWeights!
        // R'G'B' offsets from grey of a chroma (Pb, Pr) in `source`, then `target`'s (Y, Pb, Pr)
        // of them; Y is 0…1 (219 codes), Pb and Pr −0.5…0.5 (224 codes).
        func recoded(pb: Double, pr: Double) -> (y: Double, pb: Double, pr: Double) {
            let r = 2 * (1 - a.r) * pr, bl = 2 * (1 - a.b) * pb
            let g = -(2 * a.r * (1 - a.r) * pr + 2 * a.b * (1 - a.b) * pb) / a.g
            let y = b.r * r + b.g * g + b.b * bl
            return (y, (bl - y) / (2 * (1 - b.b)), (r - y) / (2 * (1 - b.r)))
        }
        func q(_ x: Double) -> Int { Int((x * 65536).rounded()) }
        let fromCb = recoded(pb: 1 / 224, pr: 0), fromCr = recoded(pb: 0, pr: 1 / 224)
        yU = q(fromCb.y * 219); yV = q(fromCr.y * 219)
        uU = q(fromCb.pb * 224); uV = q(fromCr.pb * 224)
        vU = q(fromCb.pr * 224); vV = q(fromCr.pr * 224)
        isIdentity = a == b
    }

    @inline(__always) private static func clamp8(_ v: Int) -> UInt8 { UInt8(truncatingIfNeeded: v < 0 ? 0 : (v > 255 ? 255 : v)) }

    /// Re-encodes `image` in place (alpha, if any, is left as it is).
    public func apply(to image: YUVImage) {
        guard !isIdentity else { return }
        let y = image.y, u = image.u, v = image.v
        for cy in 0..<u.height {
            let ur = u.row(cy), vr = v.row(cy)
            // Luma first, with the block's chroma as it was.
            for row in (2 * cy)..<min(2 * cy + 2, y.height) {
                let yr = y.row(row)
                for x in 0..<y.width {
                    let cu = Int(ur[x >> 1]) - 128, cv = Int(vr[x >> 1]) - 128
                    yr[x] = Self.clamp8(((Int(yr[x]) << 16) + yU * cu + yV * cv + 32768) >> 16)
                }
            }
            for cx in 0..<u.width {
                let cu = Int(ur[cx]) - 128, cv = Int(vr[cx]) - 128
                ur[cx] = Self.clamp8((uU * cu + uV * cv + (128 << 16) + 32768) >> 16)
                vr[cx] = Self.clamp8((vU * cu + vV * cv + (128 << 16) + 32768) >> 16)
            }
        }
    }
}
