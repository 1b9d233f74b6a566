import ReelCore

/// R'G'B' ↔ limited-range Y'CbCr with one matrix: how overlays, text, captions and colours
/// (R'G'B', taken as the output's own) enter the compositor, whose frames are in the output's
/// Y'CbCr (`OutputColour`). The coefficients follow from the matrix's luma weights (Kr, Kb)
/// as BT.601 and BT.709 define them, so `.bt601` gives exactly swscale's BT.601 numbers.
///
/// Integer arithmetic with 16 fractional bits: the per-pixel loops never touch Double.
public struct ColorConversion: Sendable, Hashable {
    // Coefficients × 65536 (limited range: Y 16…235, Cb/Cr 16…240).
    private let yR: Int, yG: Int, yB: Int
    private let uR: Int, uG: Int, uB: Int
    private let vR: Int, vG: Int, vB: Int
    // Inverse: kY·(Y-16), kRV·Cr, kGU·Cb, kGV·Cr, kBU·Cb.
    private let kY: Int, kRV: Int, kGU: Int, kGV: Int, kBU: Int

    /// The conversion of `matrix`. Every matrix an output can have is built from luma weights;
    /// the identity and YCgCo, which are not, get BT.709's.
    public init(matrix: YCbCrMatrix) {
        let w = matrix.lumaWeights ?? YCbCrMatrix.bt709.lumaWeights!
        func q(_ x: Double) -> Int { Int((x * 65536).rounded()) }
        let ys = 219.0 / 255, cs = 224.0 / 255
        let cbScale = cs / (2 * (1 - w.b)), crScale = cs / (2 * (1 - w.r))
        yR = q(ys * w.r); yG = q(ys * w.g); yB = q(ys * w.b)
        uR = q(-cbScale * w.r); uG = q(-cbScale * w.g); uB = q(cbScale * (1 - w.b))
        vR = q(crScale * (1 - w.r)); vG = q(-crScale * w.g); vB = q(-crScale * w.b)
        kY = q(1 / ys)
        kRV = q(2 * (1 - w.r) / cs); kBU = q(2 * (1 - w.b) / cs)
        kGU = q(-2 * w.b * (1 - w.b) / (w.g * cs)); kGV = q(-2 * w.r * (1 - w.r) / (w.g * cs))
    }

    /// BT.601 (SD; swscale's default).
    public static let bt601 = ColorConversion(matrix: .smpte170M)
    /// BT.709 (HD; Reel's default output).
    public static let bt709 = ColorConversion(matrix: .bt709)

    @inline(__always) private static func clamp8(_ v: Int) -> UInt8 { UInt8(truncatingIfNeeded: v < 0 ? 0 : (v > 255 ? 255 : v)) }

    @inline(__always) func luma(_ r: Int, _ g: Int, _ b: Int) -> UInt8 {
        Self.clamp8((yR * r + yG * g + yB * b + (16 << 16) + 32768) >> 16)
    }
    @inline(__always) func cb(_ r: Int, _ g: Int, _ b: Int) -> UInt8 {
        Self.clamp8((uR * r + uG * g + uB * b + (128 << 16) + 32768) >> 16)
    }
    @inline(__always) func cr(_ r: Int, _ g: Int, _ b: Int) -> UInt8 {
        Self.clamp8((vR * r + vG * g + vB * b + (128 << 16) + 32768) >> 16)
    }

    /// The limited-range Y'CbCr of an RGB colour (alpha ignored).
    public func yuv(_ c: RGBAColor) -> (y: UInt8, u: UInt8, v: UInt8) {
        let r = Int(c.r), g = Int(c.g), b = Int(c.b)
        return (luma(r, g, b), cb(r, g, b), cr(r, g, b))
    }

    /// Converts straight-alpha RGBA (`stride` bytes per row) to a `YUVImage` with an alpha plane.
    /// Chroma is the conversion of the 2×2 block's mean colour (centre-sited, like the compositor).
    public func yuvImage(rgba: UnsafePointer<UInt8>, width: Int, height: Int, stride: Int) -> YUVImage {
        let image = YUVImage(width: width, height: height, hasAlpha: true)
        let yp = image.y, ap = image.a!, up = image.u, vp = image.v
        for row in 0..<height {
            let s = rgba + row * stride, dy = yp.row(row), da = ap.row(row)
            for x in 0..<width {
                let p = s + 4 * x
                dy[x] = luma(Int(p[0]), Int(p[1]), Int(p[2]))
                da[x] = p[3]
            }
        }
        for cy in 0..<up.height {
            let r0 = rgba + 2 * cy * stride
            let r1 = 2 * cy + 1 < height ? r0 + stride : r0
            let du = up.row(cy), dv = vp.row(cy)
            for cx in 0..<up.width {
                let x0 = 8 * cx, x1 = 2 * cx + 1 < width ? x0 + 4 : x0
                let r = Int(r0[x0]) + Int(r0[x1]) + Int(r1[x0]) + Int(r1[x1])
                let g = Int(r0[x0 + 1]) + Int(r0[x1 + 1]) + Int(r1[x0 + 1]) + Int(r1[x1 + 1])
                let b = Int(r0[x0 + 2]) + Int(r0[x1 + 2]) + Int(r1[x0 + 2]) + Int(r1[x1 + 2])
                // Sums are 4× the mean: fold the /4 into the final shift.
                du[cx] = Self.clamp8((uR * r + uG * g + uB * b + (128 << 18) + (1 << 17)) >> 18)
                dv[cx] = Self.clamp8((vR * r + vG * g + vB * b + (128 << 18) + (1 << 17)) >> 18)
            }
        }
        return image
    }

    /// Converts back to packed straight-alpha RGBA (`width*4` bytes per row); alpha is 255 when
    /// the image has no alpha plane. Chroma is taken from the co-sited chroma sample (nearest).
    /// Meant for tests and thumbnails, not the render loop.
    public func rgba(_ image: YUVImage) -> [UInt8] {
        let w = image.width, h = image.height
        var out = [UInt8](repeating: 255, count: w * h * 4)
        out.withUnsafeMutableBufferPointer { buf in
            let o = buf.baseAddress!
            for row in 0..<h {
                let sy = image.y.row(row), su = image.u.row(row / 2), sv = image.v.row(row / 2)
                let sa = image.a?.row(row)
                let d = o + row * w * 4
                for x in 0..<w {
                    let yy = kY * (Int(sy[x]) - 16) + 32768
                    let u = Int(su[x / 2]) - 128, v = Int(sv[x / 2]) - 128
                    d[4 * x] = Self.clamp8((yy + kRV * v) >> 16)
                    d[4 * x + 1] = Self.clamp8((yy + kGU * u + kGV * v) >> 16)
                    d[4 * x + 2] = Self.clamp8((yy + kBU * u) >> 16)
                    if let sa { d[4 * x + 3] = sa[x] }
                }
            }
        }
        return out
    }
}
