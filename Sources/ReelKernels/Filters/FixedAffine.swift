#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// A pointwise program that is one clamped affine map of RGB, run in 16-bit fixed point: eight
/// pixels a register instead of four, and no conversions between integers and floats.
///
/// Same semantics as the `Float` path (`PointwiseProgram`): each pixel's RGB from its luma and
/// its block's chroma, the map, a clamp to 0…1, luma per pixel and chroma from each 2×2
/// block's mean RGB. Values are in Q13 (1.0 = 8192), so anything from −4 to 4 is held and a
/// clamp after saturating arithmetic is exact. The errors are those of 13-bit fractions and of
/// the truncating 16-bit multiplies: the output code values are within one of the `Float`
/// path's (most equal), far inside the 4:2:0 rounding the filters are held to.
///
/// A map is taken only when every term fits (`init` returns nil otherwise, and the `Float`
/// path runs): |slope| up to 3.4 times the identity's, each chroma weight up to twice the
/// identity's largest (Cb's weight in blue), and the chroma part of each channel within ±4.
/// Brightness, invert, hue, sepia, grayscale, contrast and saturation up to about 1.9, and
/// grade-like colour matrices fit; a strong `contrast` or `exposure` does not.
///
/// Groups are two rows of 16 pixels (8 chroma samples); a last narrower group (any even
/// width) goes through a 16-byte scratch copy with the same arithmetic, so every pixel of a
/// picture is computed one way.
struct FixedAffine {
    #if arch(x86_64)
    /// Per channel (r, g, b): |slope|·2²¹ for `pmulhuw` of luma·256 (giving luma·|slope| in
    /// Q13), whether the slope is negative, the chroma weights ·2²¹ for `pmulhw` of
    /// (Cb − 128)·256 and (Cr − 128)·256, and the offset in Q13.
    private let slope: (__m128i, __m128i, __m128i)
    private let negative: (Bool, Bool, Bool)
    private let cb: (__m128i, __m128i, __m128i)
    private let cr: (__m128i, __m128i, __m128i)
    private let offset: (__m128i, __m128i, __m128i)
    #endif

    static let one: Int32 = 8192

    /// The map `channel = y·slope + (Cb − 128)·cbWeight + (Cr − 128)·crWeight + offset`
    /// (code values in, 0…1 out), or nil when a term does not fit (see the type's comment).
    init?(slope s: SIMD3<Float>, cbWeight u: SIMD3<Float>, crWeight v: SIMD3<Float>, offset o: SIMD3<Float>) {
        #if arch(x86_64)
        func fixed(_ x: Float, _ scale: Float) -> Int32? {
            let f = (x * scale).rounded()
            return abs(f) <= 32767 ? Int32(f) : nil
        }
        var sl = [__m128i](), cbs = [__m128i](), crs = [__m128i](), offs = [__m128i](), neg = [Bool]()
        for c in 0..<3 {
            // luma·|slope| in Q13 must stay within the signed range: 255·|s|·8192 ≤ 32767.
            guard let k = fixed(abs(s[c]), 2_097_152), 255 * Float(k) / 256 <= 32767,
                  let a = fixed(u[c], 2_097_152), let b = fixed(v[c], 2_097_152),
                  let d = fixed(o[c], Float(Self.one)),
                  128 * (abs(Float(a)) + abs(Float(b))) / 256 + abs(Float(d)) <= 32767 else { return nil }
            sl.append(Self.splat(k)); neg.append(s[c] < 0)
            cbs.append(Self.splat(a)); crs.append(Self.splat(b)); offs.append(Self.splat(d))
        }
        slope = (sl[0], sl[1], sl[2]); negative = (neg[0], neg[1], neg[2])
        cb = (cbs[0], cbs[1], cbs[2]); cr = (crs[0], crs[1], crs[2]); offset = (offs[0], offs[1], offs[2])
        #else
        return nil
        #endif
    }

    #if arch(x86_64)
    @inline(__always) static func splat(_ v: Int32) -> __m128i {
        unsafeBitCast(SIMD8<Int16>(repeating: Int16(truncatingIfNeeded: v)), to: __m128i.self)
    }

    // Y' = 16 + 219·(0.299 R + 0.587 G + 0.114 B): pmulhuw(v·4, K) = 128·219·k·v for v in Q13.
    private static let lumaWeights = (splat(16_763), splat(32_910), splat(6_391))
    private static let lumaBias = splat(16 * 128 + 64 + 1)
    // Cb, Cr = 128 + 224·(…): pmulhw(mean·4, K) = 128·224·k·mean for a mean in Q13.
    private static let cbWeights = (splat(-9_676), splat(-18_996), splat(28_672))
    private static let crWeights = (splat(28_672), splat(-24_009), splat(-4_663))
    private static let chromaBias = splat(128 * 128 + 64 + 1)
    private static let ones = splat(1)
    private static let full = splat(one)
    private static let centre = splat(128)
    #endif

    /// Runs the map over `image` in place (even width and height).
    func apply(to image: YUVImage) {
        #if arch(x86_64)
        let width = image.width, whole = width & ~15
        var y0 = SIMD16<UInt8>(), y1 = SIMD16<UInt8>(), u = SIMD8<UInt8>(), v = SIMD8<UInt8>()
        for cy in 0..<(image.height / 2) {
            let rows = GroupRows(image, cy: cy)
            var x = 0
            while x < whole {
                group(rows.y0 + x, rows.y1 + x, rows.u + x / 2, rows.v + x / 2)
                x += 16
            }
            if x < width {
                // The last columns through a scratch group: same arithmetic, `count` pixels kept.
                let n = width - x
                withUnsafeMutableBytes(of: &y0) { p in p.copyMemory(from: UnsafeRawBufferPointer(start: rows.y0 + x, count: n)) }
                withUnsafeMutableBytes(of: &y1) { p in p.copyMemory(from: UnsafeRawBufferPointer(start: rows.y1 + x, count: n)) }
                withUnsafeMutableBytes(of: &u) { p in p.copyMemory(from: UnsafeRawBufferPointer(start: rows.u + x / 2, count: n / 2)) }
                withUnsafeMutableBytes(of: &v) { p in p.copyMemory(from: UnsafeRawBufferPointer(start: rows.v + x / 2, count: n / 2)) }
                withUnsafeMutableBytes(of: &y0) { a in
                    withUnsafeMutableBytes(of: &y1) { b in
                        withUnsafeMutableBytes(of: &u) { c in
                            withUnsafeMutableBytes(of: &v) { d in
                                let p = (a.baseAddress!.assumingMemoryBound(to: UInt8.self), b.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                         c.baseAddress!.assumingMemoryBound(to: UInt8.self), d.baseAddress!.assumingMemoryBound(to: UInt8.self))
                                group(p.0, p.1, p.2, p.3)
                                (rows.y0 + x).update(from: p.0, count: n)
                                (rows.y1 + x).update(from: p.1, count: n)
                                (rows.u + x / 2).update(from: p.2, count: n / 2)
                                (rows.v + x / 2).update(from: p.3, count: n / 2)
                            }
                        }
                    }
                }
            }
        }
        #endif
    }

    #if arch(x86_64)
    /// One group in place: 16 pixels of two luma rows and their 8 chroma samples.
    @inline(__always) private func group(_ py0: UnsafeMutablePointer<UInt8>, _ py1: UnsafeMutablePointer<UInt8>,
                                         _ pu: UnsafeMutablePointer<UInt8>, _ pv: UnsafeMutablePointer<UInt8>) {
        let zero = _mm_setzero_si128()
        // (Cb − 128)·256 and (Cr − 128)·256 as 16-bit lanes.
        let du = _mm_slli_epi16(_mm_sub_epi16(_mm_unpacklo_epi8(Self.load8(pu), zero), Self.centre), 8)
        let dv = _mm_slli_epi16(_mm_sub_epi16(_mm_unpacklo_epi8(Self.load8(pv), zero), Self.centre), 8)
        // Luma·256: the byte in each lane's high half.
        let l0 = Self.load16(py0), l1 = Self.load16(py1)
        let y = (_mm_unpacklo_epi8(zero, l0), _mm_unpackhi_epi8(zero, l0), _mm_unpacklo_epi8(zero, l1), _mm_unpackhi_epi8(zero, l1))

        /// A channel for the group's 32 pixels: (row 0 left, row 0 right, row 1 left, row 1 right).
        @inline(__always) func channel(_ s: __m128i, _ negative: Bool, _ a: __m128i, _ b: __m128i, _ d: __m128i)
            -> (__m128i, __m128i, __m128i, __m128i) {
            let w = _mm_adds_epi16(_mm_adds_epi16(_mm_mulhi_epi16(du, a), _mm_mulhi_epi16(dv, b)), d)
            let wl = _mm_unpacklo_epi16(w, w), wh = _mm_unpackhi_epi16(w, w)
            @inline(__always) func pixel(_ luma: __m128i, _ w: __m128i) -> __m128i {
                let t = _mm_mulhi_epu16(luma, s)
                let v = negative ? _mm_subs_epi16(w, t) : _mm_adds_epi16(w, t)
                return _mm_min_epi16(_mm_max_epi16(v, zero), Self.full)
            }
            return (pixel(y.0, wl), pixel(y.1, wh), pixel(y.2, wl), pixel(y.3, wh))
        }
        let r = channel(slope.0, negative.0, cb.0, cr.0, offset.0)
        let g = channel(slope.1, negative.1, cb.1, cr.1, offset.1)
        let b = channel(slope.2, negative.2, cb.2, cr.2, offset.2)

        @inline(__always) func luma(_ r: __m128i, _ g: __m128i, _ b: __m128i) -> __m128i {
            let k = Self.lumaWeights
            var s = _mm_add_epi16(_mm_mulhi_epu16(_mm_slli_epi16(r, 2), k.0), Self.lumaBias)
            s = _mm_add_epi16(s, _mm_mulhi_epu16(_mm_slli_epi16(g, 2), k.1))
            s = _mm_add_epi16(s, _mm_mulhi_epu16(_mm_slli_epi16(b, 2), k.2))
            return _mm_srli_epi16(s, 7)
        }
        Self.store16(_mm_packus_epi16(luma(r.0, g.0, b.0), luma(r.1, g.1, b.1)), py0)
        Self.store16(_mm_packus_epi16(luma(r.2, g.2, b.2), luma(r.3, g.3, b.3)), py1)

        /// A channel's mean over each 2×2 block, Q13 ·4, 8 lanes (one per block).
        @inline(__always) func mean4(_ c: (__m128i, __m128i, __m128i, __m128i)) -> __m128i {
            let left = _mm_madd_epi16(_mm_add_epi16(c.0, c.2), Self.ones)
            let right = _mm_madd_epi16(_mm_add_epi16(c.1, c.3), Self.ones)
            return _mm_packs_epi32(left, right)   // the sum of four Q13 values: the mean ·4
        }
        let mr = mean4(r), mg = mean4(g), mb = mean4(b)
        @inline(__always) func chroma(_ k: (__m128i, __m128i, __m128i)) -> __m128i {
            var s = _mm_add_epi16(_mm_mulhi_epi16(mr, k.0), Self.chromaBias)
            s = _mm_add_epi16(s, _mm_mulhi_epi16(mg, k.1))
            s = _mm_add_epi16(s, _mm_mulhi_epi16(mb, k.2))
            return _mm_srai_epi16(s, 7)
        }
        Self.store8(_mm_packus_epi16(chroma(Self.cbWeights), zero), pu)
        Self.store8(_mm_packus_epi16(chroma(Self.crWeights), zero), pv)
    }

    @inline(__always) private static func load16(_ p: UnsafePointer<UInt8>) -> __m128i {
        unsafeBitCast(UnsafeRawPointer(p).loadUnaligned(as: SIMD16<UInt8>.self), to: __m128i.self)
    }

    @inline(__always) private static func load8(_ p: UnsafePointer<UInt8>) -> __m128i {
        _mm_cvtsi64_si128(UnsafeRawPointer(p).loadUnaligned(as: Int64.self))
    }

    @inline(__always) private static func store16(_ v: __m128i, _ p: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(p).storeBytes(of: unsafeBitCast(v, to: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
    }

    @inline(__always) private static func store8(_ v: __m128i, _ p: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(p).storeBytes(of: _mm_cvtsi128_si64(v), as: Int64.self)
    }
    #endif
}
