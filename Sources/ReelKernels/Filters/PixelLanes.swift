import ReelCore

#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// The vector vocabulary of the filter kernels: 8 luma pixels (or 4 chroma samples) as
/// `Float` lanes, loaded from and stored to 8-bit planes.
///
/// Every kernel walks a 4:2:0 picture in *groups*: two luma rows × 8 columns, which share
/// 4 chroma samples (2×2 blocks). A pixel's 0…1 RGB is computed from its own luma and its
/// block's chroma (limited range, in the picture's matrix: `KernelYCbCr`); a block's new chroma is the
/// conversion of the mean of its four new RGB values. That is exactly "apply the formula to
/// each pixel, then subsample to 4:2:0 by averaging", with no RGB picture ever stored.
///
/// The helpers avoid the generic SIMD paths that do not vectorise on x86-64 (rounding,
/// `clamped`, float ↔ integer conversion). On x86-64 they are SSE2 intrinsics: widening a
/// byte is two unpacks and one conversion per 4 lanes, and narrowing one conversion (rounding
/// to nearest, ties to even) and two saturating packs. Elsewhere, portable code with the same
/// results: masked replacement for clamping and the 1.5·2²³ trick for rounding.
typealias Lanes8 = SIMD8<Float>
typealias Lanes4 = SIMD4<Float>

enum PixelLanes {
    /// `count` (1…8) bytes at `p` as lanes; lanes past `count` are 0.
    @inline(__always) static func load(_ p: UnsafePointer<UInt8>, count: Int = 8) -> Lanes8 {
        if count == 8 { return lanes(UnsafeRawPointer(p).loadUnaligned(as: SIMD8<UInt8>.self)) }
        var bytes = SIMD8<UInt8>()
        for i in 0..<count { bytes[i] = p[i] }
        return lanes(bytes)
    }

    /// `count` (1…4) bytes at `p` as lanes; lanes past `count` are 0.
    @inline(__always) static func load4(_ p: UnsafePointer<UInt8>, count: Int = 4) -> Lanes4 {
        if count == 4 { return lanes(UnsafeRawPointer(p).loadUnaligned(as: SIMD4<UInt8>.self)) }
        var bytes = SIMD4<UInt8>()
        for i in 0..<count { bytes[i] = p[i] }
        return lanes(bytes)
    }

    @inline(__always) static func lanes(_ bytes: SIMD8<UInt8>) -> Lanes8 {
        #if arch(x86_64)
        let zero = _mm_setzero_si128()
        let words = _mm_unpacklo_epi8(_mm_cvtsi64_si128(unsafeBitCast(bytes, to: Int64.self)), zero)
        return Lanes8(lowHalf: _mm_cvtepi32_ps(_mm_unpacklo_epi16(words, zero)),
                      highHalf: _mm_cvtepi32_ps(_mm_unpackhi_epi16(words, zero)))
        #else
        return Lanes8(SIMD8<Int32>(truncatingIfNeeded: bytes))
        #endif
    }

    @inline(__always) static func lanes(_ bytes: SIMD4<UInt8>) -> Lanes4 {
        #if arch(x86_64)
        let zero = _mm_setzero_si128()
        let words = _mm_unpacklo_epi8(_mm_cvtsi32_si128(unsafeBitCast(bytes, to: Int32.self)), zero)
        return _mm_cvtepi32_ps(_mm_unpacklo_epi16(words, zero))
        #else
        return Lanes4(SIMD4<Int32>(truncatingIfNeeded: bytes))
        #endif
    }

    /// Stores the first `count` lanes, clamped to 0…255 and rounded to nearest (ties to even).
    @inline(__always) static func store(_ v: Lanes8, _ p: UnsafeMutablePointer<UInt8>, count: Int = 8) {
        let bytes = bytes8(v)
        if count == 8 {
            UnsafeMutableRawPointer(p).storeBytes(of: bytes, as: SIMD8<UInt8>.self)
        } else {
            for i in 0..<count { p[i] = bytes[i] }
        }
    }

    @inline(__always) static func store4(_ v: Lanes4, _ p: UnsafeMutablePointer<UInt8>, count: Int = 4) {
        let bytes = bytes4(v)
        if count == 4 {
            UnsafeMutableRawPointer(p).storeBytes(of: bytes, as: SIMD4<UInt8>.self)
        } else {
            for i in 0..<count { p[i] = bytes[i] }
        }
    }

    /// Lanes clamped to 0…255 and rounded to nearest (ties to even), as bytes. Not the generic
    /// `SIMD8<UInt8>(truncatingIfNeeded:)`, which is not inlined in large kernels and costs a
    /// call and a loop per use.
    @inline(__always) static func bytes8(_ v: Lanes8) -> SIMD8<UInt8> {
        #if arch(x86_64)
        let c = clamp(v, 0, 255)
        let words = _mm_packs_epi32(_mm_cvtps_epi32(c.lowHalf), _mm_cvtps_epi32(c.highHalf))
        return unsafeBitCast(_mm_cvtsi128_si64(_mm_packus_epi16(words, words)), to: SIMD8<UInt8>.self)
        #else
        let b = unsafeBitCast(clamp(v, 0, 255) + 12_582_912, to: SIMD8<UInt32>.self)
        return SIMD8<UInt8>(UInt8(truncatingIfNeeded: b[0]), UInt8(truncatingIfNeeded: b[1]), UInt8(truncatingIfNeeded: b[2]),
                            UInt8(truncatingIfNeeded: b[3]), UInt8(truncatingIfNeeded: b[4]), UInt8(truncatingIfNeeded: b[5]),
                            UInt8(truncatingIfNeeded: b[6]), UInt8(truncatingIfNeeded: b[7]))
        #endif
    }

    @inline(__always) static func bytes4(_ v: Lanes4) -> SIMD4<UInt8> {
        #if arch(x86_64)
        let words = _mm_packs_epi32(_mm_cvtps_epi32(clamp4(v, 0, 255)), _mm_setzero_si128())
        return unsafeBitCast(_mm_cvtsi128_si32(_mm_packus_epi16(words, words)), to: SIMD4<UInt8>.self)
        #else
        let b = unsafeBitCast(clamp4(v, 0, 255) + 12_582_912, to: SIMD4<UInt32>.self)
        return SIMD4<UInt8>(UInt8(truncatingIfNeeded: b[0]), UInt8(truncatingIfNeeded: b[1]),
                            UInt8(truncatingIfNeeded: b[2]), UInt8(truncatingIfNeeded: b[3]))
        #endif
    }

    /// Lanes clamped to `lo`…`hi`, a half at a time (`clamp4`).
    @inline(__always) static func clamp(_ v: Lanes8, _ lo: Float, _ hi: Float) -> Lanes8 {
        Lanes8(lowHalf: clamp4(v.lowHalf, lo, hi), highHalf: clamp4(v.highHalf, lo, hi))
    }

    /// Lanes clamped to `lo`…`hi`. On x86-64 one `maxps` and one `minps` (NaN becomes `lo`).
    @inline(__always) static func clamp4(_ v: Lanes4, _ lo: Float, _ hi: Float) -> Lanes4 {
        #if arch(x86_64)
        return _mm_min_ps(_mm_max_ps(v, Lanes4(repeating: lo)), Lanes4(repeating: hi))
        #else
        var r = v
        r.replace(with: Lanes4(repeating: lo), where: r .< lo)
        r.replace(with: Lanes4(repeating: hi), where: r .> hi)
        return r
        #endif
    }

    /// Lane-wise max and min (the standard library's `pointwiseMax` is not inlined).
    @inline(__always) static func max4(_ a: Lanes4, _ b: Lanes4) -> Lanes4 {
        #if arch(x86_64)
        return _mm_max_ps(a, b)
        #else
        return a.replacing(with: b, where: b .> a)
        #endif
    }

    @inline(__always) static func min4(_ a: Lanes4, _ b: Lanes4) -> Lanes4 {
        #if arch(x86_64)
        return _mm_min_ps(a, b)
        #else
        return a.replacing(with: b, where: b .< a)
        #endif
    }

    /// The sum of the `count` bytes at `p`. On x86-64, 16 bytes at a time by `psadbw` (the sum
    /// of absolute differences from zero: two 8-byte sums per instruction).
    @inline(__always) static func byteSum(_ p: UnsafePointer<UInt8>, count: Int) -> Int {
        var total = 0, i = 0
        #if arch(x86_64)
        let zero = _mm_setzero_si128()
        while i + 16 <= count {
            let v = unsafeBitCast(UnsafeRawPointer(p + i).loadUnaligned(as: SIMD16<UInt8>.self), to: __m128i.self)
            let sums = unsafeBitCast(_mm_sad_epu8(v, zero), to: SIMD2<UInt64>.self)
            total &+= Int(truncatingIfNeeded: sums[0] &+ sums[1])
            i += 16
        }
        #endif
        while i < count { total &+= Int(p[i]); i += 1 }
        return total
    }

    /// Sets the `count` bytes at `p` to `value`, 16 at a time (no `memset` call per span).
    @inline(__always) static func fill(_ p: UnsafeMutablePointer<UInt8>, _ value: UInt8, count: Int) {
        let v = SIMD16<UInt8>(repeating: value)
        var i = 0
        while i + 16 <= count {
            UnsafeMutableRawPointer(p + i).storeBytes(of: v, as: SIMD16<UInt8>.self)
            i += 16
        }
        while i < count { p[i] = value; i += 1 }
    }

    /// Each chroma lane twice: the value of the block under each of its two pixels in a row.
    @inline(__always) static func widen(_ c: Lanes4) -> Lanes8 {
        Lanes8(c[0], c[0], c[1], c[1], c[2], c[2], c[3], c[3])
    }

    /// The sum of each horizontal pair of pixels: one lane per block.
    @inline(__always) static func pairSums(_ v: Lanes8) -> Lanes4 {
        v.evenHalf + v.oddHalf
    }
}

/// The limited-range Y'CbCr ↔ R'G'B' conversions the filter and blend-mode kernels compute
/// with, on 8-bit code values, for one matrix: the coefficients of `ColorConversion`,
/// unrounded (RGB is 0…1), and the same in the 16-bit fixed point of `Q13Group.store`. The
/// kernels read and write a picture in its own matrix, so a formula sees the picture's own
/// R'G'B' and each pixel's luma is written from that pixel's R'G'B'.
public struct KernelYCbCr: Sendable {
    // RGB from (Y − 16), (Cb − 128), (Cr − 128).
    let kY: Float, kRV: Float, kGU: Float, kGV: Float, kBU: Float
    // Y' = 16 + 219·(Kr R + Kg G + Kb B).
    let yR: Float, yG: Float, yB: Float
    // Cb = 128 + 224·(B − Y)/(2(1 − Kb)), Cr = 128 + 224·(R − Y)/(2(1 − Kr)), as weights of R, G, B.
    let uR: Float, uG: Float, uB: Float
    let vR: Float, vG: Float, vB: Float
    /// The store's weights in fixed point: luma 128·219·k·2 (for `pmulhuw` of a Q13 value ·4),
    /// chroma 256·224·k (for `pmulhw` of a block's sum of four Q13 values).
    let lumaQ13: (Int16, Int16, Int16), cbQ13: (Int16, Int16, Int16), crQ13: (Int16, Int16, Int16)

    /// The conversions of `matrix`; the identity and YCgCo, which have no luma weights, get
    /// BT.709's (as `ColorConversion`).
    public init(_ matrix: YCbCrMatrix) {
        let w = matrix.lumaWeights ?? YCbCrMatrix.bt709.lumaWeights!
        let cb = (-w.r / (2 * (1 - w.b)), -w.g / (2 * (1 - w.b)), 0.5)
        let cr = (0.5, -w.g / (2 * (1 - w.r)), -w.b / (2 * (1 - w.r)))
        kY = Float(1 / 219.0)
        kRV = Float(2 * (1 - w.r) / 224); kBU = Float(2 * (1 - w.b) / 224)
        kGU = Float(-2 * w.b * (1 - w.b) / (w.g * 224)); kGV = Float(-2 * w.r * (1 - w.r) / (w.g * 224))
        yR = Float(219 * w.r); yG = Float(219 * w.g); yB = Float(219 * w.b)
        uR = Float(224 * cb.0); uG = Float(224 * cb.1); uB = Float(224 * cb.2)
        vR = Float(224 * cr.0); vG = Float(224 * cr.1); vB = Float(224 * cr.2)
        func q(_ x: Double, _ scale: Double) -> Int16 { Int16(truncatingIfNeeded: Int((x * scale).rounded())) }
        // pmulhuw is unsigned: a weight up to 65535 (Kg·56064 < 65536 for any Kg < 1).
        lumaQ13 = (q(w.r, 56064), q(w.g, 56064), q(w.b, 56064))
        cbQ13 = (q(cb.0, 57344), q(cb.1, 57344), q(cb.2, 57344))
        crQ13 = (q(cr.0, 57344), q(cr.1, 57344), q(cr.2, 57344))
    }

    /// BT.601 (SMPTE 170M): an SD picture's, and the default of the kernels' public entry points.
    public static let bt601 = KernelYCbCr(.smpte170M)

    /// The limited-range Y'CbCr of 0…1 RGB (unrounded).
    func yuv(r: Float, g: Float, b: Float) -> (y: Float, u: Float, v: Float) {
        (16 + r * yR + g * yG + b * yB, 128 + r * uR + g * uG + b * uB, 128 + r * vR + g * vG + b * vB)
    }
}

/// A group's RGB: two rows of 8 pixels, each channel 0…1 (or beyond, before clamping).
struct RGBGroup {
    var r0: Lanes8, g0: Lanes8, b0: Lanes8
    var r1: Lanes8, g1: Lanes8, b1: Lanes8

    /// Applies `f` to each row's (r, g, b).
    @inline(__always) mutating func rows(_ f: (inout Lanes8, inout Lanes8, inout Lanes8) -> Void) {
        f(&r0, &g0, &b0)
        f(&r1, &g1, &b1)
    }

    @inline(__always) mutating func clamp() {
        rows { r, g, b in
            r = PixelLanes.clamp(r, 0, 1); g = PixelLanes.clamp(g, 0, 1); b = PixelLanes.clamp(b, 0, 1)
        }
    }

    /// Reads the group whose top-left luma pixel is (`x`, 2·`cy`): `count` (even, ≤ 8) columns.
    /// Unclamped RGB: legal Y'CbCr gives 0…1, chroma subsampling can step slightly outside.
    @inline(__always) static func load(_ image: YUVImage, x: Int, cy: Int, count: Int, _ k: KernelYCbCr) -> RGBGroup {
        load(GroupRows(image, cy: cy), x: x, count: count, k)
    }

    /// Reads the group at column `x` of `rows`: `count` (even, ≤ 8) columns.
    @inline(__always) static func load(_ rows: GroupRows, x: Int, count: Int, _ k: KernelYCbCr) -> RGBGroup {
        let cx = x / 2, cn = count / 2
        let u = PixelLanes.widen(PixelLanes.load4(rows.u + cx, count: cn) - 128)
        let v = PixelLanes.widen(PixelLanes.load4(rows.v + cx, count: cn) - 128)
        let cr = v * k.kRV, cg = u * k.kGU + v * k.kGV, cb = u * k.kBU
        let l0 = (PixelLanes.load(rows.y0 + x, count: count) - 16) * k.kY
        let l1 = (PixelLanes.load(rows.y1 + x, count: count) - 16) * k.kY
        return RGBGroup(r0: l0 + cr, g0: l0 + cg, b0: l0 + cb, r1: l1 + cr, g1: l1 + cg, b1: l1 + cb)
    }

    /// Writes each pixel's luma and each block's chroma (from the mean of its four RGB values).
    /// Channels should already be in 0…1; the stores clamp the code values anyway.
    @inline(__always) func store(_ image: YUVImage, x: Int, cy: Int, count: Int, _ k: KernelYCbCr) {
        store(GroupRows(image, cy: cy), x: x, count: count, k)
    }

    @inline(__always) func store(_ rows: GroupRows, x: Int, count: Int, _ k: KernelYCbCr) {
        PixelLanes.store(16 + r0 * k.yR + g0 * k.yG + b0 * k.yB, rows.y0 + x, count: count)
        PixelLanes.store(16 + r1 * k.yR + g1 * k.yG + b1 * k.yB, rows.y1 + x, count: count)
        let r = PixelLanes.pairSums(r0 + r1) * 0.25, g = PixelLanes.pairSums(g0 + g1) * 0.25, b = PixelLanes.pairSums(b0 + b1) * 0.25
        let cx = x / 2, cn = count / 2
        PixelLanes.store4(128 + r * k.uR + g * k.uG + b * k.uB, rows.u + cx, count: cn)
        PixelLanes.store4(128 + r * k.vR + g * k.vG + b * k.vB, rows.v + cx, count: cn)
    }

    /// Calls `body(x, cy, count)` for every group of an even-sized picture, row pairs top to bottom.
    @inline(__always) static func forEach(width: Int, height: Int, _ body: (Int, Int, Int) -> Void) {
        for cy in 0..<(height / 2) {
            var x = 0
            while x < width {
                body(x, cy, min(8, width - x))
                x += 8
            }
        }
    }
}

/// The rows one row pair of groups reads and writes: two luma rows and their chroma rows.
/// Kernels in a hurry loop over these themselves, whole groups (`count` 8, a constant the
/// loads and stores fold) apart from a last narrower one, instead of calling a closure per
/// group through `RGBGroup.forEach`.
struct GroupRows {
    let y0: UnsafeMutablePointer<UInt8>, y1: UnsafeMutablePointer<UInt8>
    let u: UnsafeMutablePointer<UInt8>, v: UnsafeMutablePointer<UInt8>

    /// Row pair `cy` (luma rows 2·`cy` and 2·`cy` + 1) of `image`.
    @inline(__always) init(_ image: YUVImage, cy: Int) {
        y0 = image.y.row(2 * cy); y1 = image.y.row(2 * cy + 1)
        u = image.u.row(cy); v = image.v.row(cy)
    }

    @inline(__always) init(y0: UnsafeMutablePointer<UInt8>, y1: UnsafeMutablePointer<UInt8>,
                           u: UnsafeMutablePointer<UInt8>, v: UnsafeMutablePointer<UInt8>) {
        self.y0 = y0; self.y1 = y1; self.u = u; self.v = v
    }

    /// The rows from luma column `x` (even) on.
    @inline(__always) func advanced(by x: Int) -> GroupRows {
        GroupRows(y0: y0 + x, y1: y1 + x, u: u + x / 2, v: v + x / 2)
    }
}
