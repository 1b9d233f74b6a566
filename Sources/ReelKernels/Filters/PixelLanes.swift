#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// The vector vocabulary of the filter kernels: 8 luma pixels (or 4 chroma samples) as
/// `Float` lanes, loaded from and stored to 8-bit planes.
///
/// Every kernel walks a 4:2:0 picture in *groups*: two luma rows × 8 columns, which share
/// 4 chroma samples (2×2 blocks). A pixel's 0…1 RGB is computed from its own luma and its
/// block's chroma (BT.601, limited range, as `ColorConversion`); a block's new chroma is the
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

/// BT.601 limited-range conversions in `Float`, on 8-bit code values: the coefficients of
/// `ColorConversion`, unrounded. RGB is 0…1.
enum YCbCr601 {
    // RGB from (Y − 16), (Cb − 128), (Cr − 128).
    static let kY: Float = 1 / 219
    static let kRV: Float = 1.402 / 224
    static let kGU: Float = -0.344_136 / 224
    static let kGV: Float = -0.714_136 / 224
    static let kBU: Float = 1.772 / 224
    // Y' = 16 + 219·(0.299 R + 0.587 G + 0.114 B).
    static let yR: Float = 219 * 0.299, yG: Float = 219 * 0.587, yB: Float = 219 * 0.114
    // Cb = 128 + 224·(−0.168736 R − 0.331264 G + 0.5 B), Cr = 128 + 224·(0.5 R − 0.418688 G − 0.081312 B).
    static let uR: Float = 224 * -0.168_736, uG: Float = 224 * -0.331_264, uB: Float = 224 * 0.5
    static let vR: Float = 224 * 0.5, vG: Float = 224 * -0.418_688, vB: Float = 224 * -0.081_312

    /// 0…1 RGB of an 8-bit colour's limited-range Y'CbCr, as the kernels see that colour.
    static func rgb(y: Float, u: Float, v: Float) -> (Float, Float, Float) {
        let l = (y - 16) * kY, cu = u - 128, cv = v - 128
        return (l + kRV * cv, l + kGU * cu + kGV * cv, l + kBU * cu)
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
    @inline(__always) static func load(_ image: YUVImage, x: Int, cy: Int, count: Int) -> RGBGroup {
        load(GroupRows(image, cy: cy), x: x, count: count)
    }

    /// Reads the group at column `x` of `rows`: `count` (even, ≤ 8) columns.
    @inline(__always) static func load(_ rows: GroupRows, x: Int, count: Int) -> RGBGroup {
        let cx = x / 2, cn = count / 2
        let u = PixelLanes.widen(PixelLanes.load4(rows.u + cx, count: cn) - 128)
        let v = PixelLanes.widen(PixelLanes.load4(rows.v + cx, count: cn) - 128)
        let cr = v * YCbCr601.kRV, cg = u * YCbCr601.kGU + v * YCbCr601.kGV, cb = u * YCbCr601.kBU
        let l0 = (PixelLanes.load(rows.y0 + x, count: count) - 16) * YCbCr601.kY
        let l1 = (PixelLanes.load(rows.y1 + x, count: count) - 16) * YCbCr601.kY
        return RGBGroup(r0: l0 + cr, g0: l0 + cg, b0: l0 + cb, r1: l1 + cr, g1: l1 + cg, b1: l1 + cb)
    }

    /// Writes each pixel's luma and each block's chroma (from the mean of its four RGB values).
    /// Channels should already be in 0…1; the stores clamp the code values anyway.
    @inline(__always) func store(_ image: YUVImage, x: Int, cy: Int, count: Int) {
        store(GroupRows(image, cy: cy), x: x, count: count)
    }

    @inline(__always) func store(_ rows: GroupRows, x: Int, count: Int) {
        PixelLanes.store(16 + r0 * YCbCr601.yR + g0 * YCbCr601.yG + b0 * YCbCr601.yB, rows.y0 + x, count: count)
        PixelLanes.store(16 + r1 * YCbCr601.yR + g1 * YCbCr601.yG + b1 * YCbCr601.yB, rows.y1 + x, count: count)
        let r = PixelLanes.pairSums(r0 + r1) * 0.25, g = PixelLanes.pairSums(g0 + g1) * 0.25, b = PixelLanes.pairSums(b0 + b1) * 0.25
        let cx = x / 2, cn = count / 2
        PixelLanes.store4(128 + r * YCbCr601.uR + g * YCbCr601.uG + b * YCbCr601.uB, rows.u + cx, count: cn)
        PixelLanes.store4(128 + r * YCbCr601.vR + g * YCbCr601.vG + b * YCbCr601.vB, rows.v + cx, count: cn)
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
