import ReelCore

/// RGB ↔ Y'CbCr conversions with BT.601 coefficients and limited (studio) range — swscale's
/// default, so frames converted here match what FFmpeg produces and thumbnails round-trip.
///
/// Integer arithmetic with 16 fractional bits: the per-pixel loops never touch Double.
public enum ColorConversion {
    // Coefficients × 65536 (BT.601, limited range: Y 16…235, Cb/Cr 16…240).
    private static let yR = 16829, yG = 33039, yB = 6416        // 0.256788, 0.504129, 0.097906
    private static let uR = -9714, uG = -19070, uB = 28784      // -0.148223, -0.290993, 0.439216
    private static let vR = 28784, vG = -24103, vB = -4681      // 0.439216, -0.367788, -0.071427
    // Inverse: 1.164384·(Y-16), 1.596027·Cr, -0.391762·Cb, -0.812968·Cr, 2.017232·Cb.
    private static let kY = 76309, kRV = 104597, kGU = -25675, kGV = -53279, kBU = 132201

    @inline(__always) private static func clamp8(_ v: Int) -> UInt8 { UInt8(truncatingIfNeeded: v < 0 ? 0 : (v > 255 ? 255 : v)) }

    @inline(__always) static func luma(_ r: Int, _ g: Int, _ b: Int) -> UInt8 {
        clamp8((yR * r + yG * g + yB * b + (16 << 16) + 32768) >> 16)
    }
    @inline(__always) static func cb(_ r: Int, _ g: Int, _ b: Int) -> UInt8 {
        clamp8((uR * r + uG * g + uB * b + (128 << 16) + 32768) >> 16)
    }
    @inline(__always) static func cr(_ r: Int, _ g: Int, _ b: Int) -> UInt8 {
        clamp8((vR * r + vG * g + vB * b + (128 << 16) + 32768) >> 16)
    }

    /// The limited-range BT.601 Y'CbCr of an RGB colour (alpha ignored).
    public static func yuv(_ c: RGBAColor) -> (y: UInt8, u: UInt8, v: UInt8) {
        let r = Int(c.r), g = Int(c.g), b = Int(c.b)
        return (luma(r, g, b), cb(r, g, b), cr(r, g, b))
    }

    /// Converts straight-alpha RGBA (`stride` bytes per row) to a `YUVImage` with an alpha plane.
    /// Chroma is the conversion of the 2×2 block's mean colour (centre-sited, like the compositor).
    public static func yuvImage(rgba: UnsafePointer<UInt8>, width: Int, height: Int, stride: Int) -> YUVImage {
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
                du[cx] = clamp8((uR * r + uG * g + uB * b + (128 << 18) + (1 << 17)) >> 18)
                dv[cx] = clamp8((vR * r + vG * g + vB * b + (128 << 18) + (1 << 17)) >> 18)
            }
        }
        return image
    }

    /// Converts back to packed straight-alpha RGBA (`width*4` bytes per row); alpha is 255 when
    /// the image has no alpha plane. Chroma is taken from the co-sited chroma sample (nearest).
    /// Meant for tests and thumbnails, not the render loop.
    public static func rgba(_ image: YUVImage) -> [UInt8] {
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
                    d[4 * x] = clamp8((yy + kRV * v) >> 16)
                    d[4 * x + 1] = clamp8((yy + kGU * u + kGV * v) >> 16)
                    d[4 * x + 2] = clamp8((yy + kBU * u) >> 16)
                    if let sa { d[4 * x + 3] = sa[x] }
                }
            }
        }
        return out
    }
}
