#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif
import CReelAVX2

/// A pointwise program that is one clamped affine map of RGB, possibly followed by one `gamma`
/// curve, run in 16-bit fixed point: eight pixels a register instead of four, and no
/// conversions between integers and floats. Blends and toon read their pictures through it.
///
/// Groups are two rows of 16 pixels (8 chroma samples); the last, narrower group of a row pair
/// goes through a scratch copy (`GroupScratch`) with the same arithmetic, so every pixel of a
/// picture is computed one way.
///
/// Same semantics as the `Float` path (`PointwiseProgram`): each pixel's RGB from its luma and
/// its block's chroma, the map, a clamp to 0…1, luma per pixel and chroma from each 2×2
/// block's mean RGB. Values are in Q13 (see `Q13`), so anything from −4 to 4 is held and a
/// clamp after saturating arithmetic is exact. The errors are those of 13-bit fractions and of
/// the truncating 16-bit multiplies: the output code values are within one of the exact
/// result's (nearly all equal), far inside the 4:2:0 rounding the filters are held to.
///
/// A map is taken only when every term fits (`init` returns nil otherwise, and the `Float`
/// path runs): |slope| up to 3.4 times the identity's, each chroma weight up to twice the
/// identity's largest (Cb's weight in blue), and the chroma part of each channel within ±4.
/// Brightness, invert, hue, sepia, grayscale, contrast and saturation up to about 1.9 (1.8 in
/// BT.709, whose Cb weight in blue is 5 % larger), and grade-like colour matrices fit; a strong
/// `contrast` or `exposure` does not.
struct FixedAffine {
    #if arch(x86_64)
    /// Per channel (r, g, b): |slope|·2²¹ for `pmulhuw` of luma·256 (giving luma·|slope| in
    /// Q13), whether the slope is negative, the chroma weights ·2²¹ for `pmulhw` of
    /// (Cb − 128)·256 and (Cr − 128)·256, and the offset in Q13 plus half a unit for the luma
    /// product's truncation: so the identity reads black (16) as exactly 0 and white (235) as
    /// exactly 1, which the blend modes that test for 0 and 1 rely on.
    private let slope: (__m128i, __m128i, __m128i)
    private let negative: (Bool, Bool, Bool)
    private let cb: (__m128i, __m128i, __m128i)
    private let cr: (__m128i, __m128i, __m128i)
    private let offset: (__m128i, __m128i, __m128i)
    /// The picture's matrix, for writing the result back (`Q13Group.store`).
    let weights: Q13Weights
    #endif
    /// Applied to each channel after the map and its clamp, when the program has a `gamma`.
    private var curve: Curve?
    /// The same terms as plain numbers, for the AVX2 and AVX-512BW kernels.
    private(set) var terms = reel_fixed_affine()

    /// The map `channel = y·slope + (Cb − 128)·cbWeight + (Cr − 128)·crWeight + offset`
    /// (code values in, 0…1 out) on pictures in the Y'CbCr of `colour`, which the result is
    /// written back in, or nil when a term does not fit (see the type's comment).
    init?(slope s: SIMD3<Float>, cbWeight u: SIMD3<Float>, crWeight v: SIMD3<Float>, offset o: SIMD3<Float>,
          colour: KernelYCbCr = .bt601, curve: Curve? = nil) {
        #if arch(x86_64)
        self.curve = curve
        weights = Q13Weights(colour)
        func fixed(_ x: Float, _ scale: Float) -> Int32? {
            let f = (x * scale).rounded()
            return abs(f) <= 32767 ? Int32(f) : nil
        }
        var sl = [__m128i](), cbs = [__m128i](), crs = [__m128i](), offs = [__m128i](), neg = [Bool](), raw = [[Int16]]()
        for c in 0..<3 {
            // luma·|slope| in Q13 must stay within the signed range: 255·|s|·8192 ≤ 32767.
            guard let k = fixed(abs(s[c]), 2_097_152), 255 * Float(k) / 256 <= 32767,
                  let a = fixed(u[c], 2_097_152), let b = fixed(v[c], 2_097_152),
                  let d = fixed(o[c] + 0.5 / Float(Q13.one), Float(Q13.one)),
                  128 * (abs(Float(a)) + abs(Float(b))) / 256 + abs(Float(d)) <= 32767 else { return nil }
            sl.append(Q13.splat(k)); neg.append(s[c] < 0)
            cbs.append(Q13.splat(a)); crs.append(Q13.splat(b)); offs.append(Q13.splat(d))
            raw.append([Int16(truncatingIfNeeded: k), Int16(truncatingIfNeeded: a), Int16(truncatingIfNeeded: b), Int16(truncatingIfNeeded: d)])
        }
        slope = (sl[0], sl[1], sl[2]); negative = (neg[0], neg[1], neg[2])
        cb = (cbs[0], cbs[1], cbs[2]); cr = (crs[0], crs[1], crs[2]); offset = (offs[0], offs[1], offs[2])
        func three(_ i: Int) -> (Int16, Int16, Int16) { (raw[0][i], raw[1][i], raw[2][i]) }
        terms = reel_fixed_affine(slope: three(0), cb: three(1), cr: three(2), offset: three(3),
                                  negative: (neg[0] ? 1 : 0, neg[1] ? 1 : 0, neg[2] ? 1 : 0),
                                  store_luma: colour.lumaQ13, store_cb: colour.cbQ13, store_cr: colour.crQ13)
        #else
        return nil
        #endif
    }

    /// The picture's own colours (the identity map) in the Y'CbCr of `k`: how blends and toon
    /// read their pictures.
    static func identity(_ k: KernelYCbCr) -> FixedAffine? {
        FixedAffine(slope: SIMD3(repeating: k.kY), cbWeight: SIMD3(0, k.kGU, k.kBU), crWeight: SIMD3(k.kRV, k.kGV, 0),
                    offset: SIMD3(repeating: -16 * k.kY), colour: k)
    }

    /// Runs the map (and its curve) over `image` in place (even width and height). On a CPU
    /// with AVX2 or AVX-512BW (`isa`), whole groups of 32 or 64 pixels run in that kernel
    /// (`CReelAVX2`, the same bytes) and the rest of each row pair here.
    func apply(to image: YUVImage, isa: VectorISA = .detected) {
        #if arch(x86_64)
        var t = terms
        let table = curve.map { UnsafePointer($0.entries) }, from = isa.vectorColumns(image.width)
        switch isa {
        case .avx512:
            reel_fixed_affine_avx512(&t, table, image.y.base, image.y.stride, image.u.base, image.u.stride, image.v.base, image.v.stride,
                                     from, image.height)
        case .avx2:
            reel_fixed_affine_avx2(&t, table, image.y.base, image.y.stride, image.u.base, image.u.stride, image.v.base, image.v.stride,
                                   from, image.height)
        case .baseline:
            break
        }
        if let curve {
            GroupScratch.forEachGroup(of: image, from: from) { rows, _, _ in curve.apply(load(rows)).store(rows, weights) }
        } else {
            GroupScratch.forEachGroup(of: image, from: from) { rows, _, _ in load(rows).store(rows, weights) }
        }
        #endif
    }

    /// A curve after the map (a `gamma` filter): each channel's Q13 value looked up in a table
    /// of all 8193, sampled from the `Float` path's table (`samples`, 0…1 at evenly spaced
    /// points, interpolated linearly as that path does).
    final class Curve: @unchecked Sendable {
        /// 8193 entries (0…8192) and a last one, 0, that is never looked up: the AVX kernels
        /// gather 32 bits (an entry and the next) a lane.
        let entries: UnsafeMutablePointer<Int16>

        init(samples t: [Float]) {
            let segments = t.count - 1
            entries = .allocate(capacity: Int(Q13.one) + 2)
            entries[Int(Q13.one) + 1] = 0
            for v in 0...Int(Q13.one) {
                let p = Double(v) / Double(Q13.one) * Double(segments)
                let k = min(Int(p), segments - 1), w = p - Double(k)
                let value = Double(t[k]) + (Double(t[k + 1]) - Double(t[k])) * w
                entries[v] = Int16(min(max(value, 0), 1) * Double(Q13.one) + 0.5)
            }
        }

        deinit { entries.deallocate() }

        #if arch(x86_64)
        /// The table at every lane of `g` (0…8192). The lanes go out to memory once, are looked
        /// up one by one into a second buffer, and come back as vectors once: writing lanes
        /// into a vector and reading it back would stall on every store.
        @inline(__always) func apply(_ g: Q13Group) -> Q13Group {
            var lanes = g, out = g
            withUnsafeMutableBytes(of: &lanes) { a in
                withUnsafeMutableBytes(of: &out) { b in
                    let p = a.baseAddress!.assumingMemoryBound(to: Int16.self), q = b.baseAddress!.assumingMemoryBound(to: Int16.self)
                    for i in 0..<96 { q[i] = entries[Int(p[i])] }
                }
            }
            return out
        }
        #endif
    }

    #if arch(x86_64)
    /// The map of the group at `rows` (16 pixels of two luma rows, 8 chroma samples), clamped.
    @inline(__always) func load(_ rows: GroupRows) -> Q13Group {
        let zero = _mm_setzero_si128()
        // (Cb − 128)·256 and (Cr − 128)·256 as 16-bit lanes.
        let du = _mm_slli_epi16(_mm_sub_epi16(_mm_unpacklo_epi8(Q13.load8(rows.u), zero), Q13.centre), 8)
        let dv = _mm_slli_epi16(_mm_sub_epi16(_mm_unpacklo_epi8(Q13.load8(rows.v), zero), Q13.centre), 8)
        // Luma·256: the byte in each lane's high half.
        let l0 = Q13.load16(rows.y0), l1 = Q13.load16(rows.y1)
        let y = (_mm_unpacklo_epi8(zero, l0), _mm_unpackhi_epi8(zero, l0), _mm_unpacklo_epi8(zero, l1), _mm_unpackhi_epi8(zero, l1))

        @inline(__always) func channel(_ s: __m128i, _ negative: Bool, _ a: __m128i, _ b: __m128i, _ d: __m128i) -> Q13Channel {
            let w = _mm_adds_epi16(_mm_adds_epi16(_mm_mulhi_epi16(du, a), _mm_mulhi_epi16(dv, b)), d)
            let wl = _mm_unpacklo_epi16(w, w), wh = _mm_unpackhi_epi16(w, w)
            @inline(__always) func pixel(_ luma: __m128i, _ w: __m128i) -> __m128i {
                let t = _mm_mulhi_epu16(luma, s)
                return Q13.clamp(negative ? _mm_subs_epi16(w, t) : _mm_adds_epi16(w, t))
            }
            return Q13Channel(pixel(y.0, wl), pixel(y.1, wh), pixel(y.2, wl), pixel(y.3, wh))
        }
        return Q13Group(r: channel(slope.0, negative.0, cb.0, cr.0, offset.0),
                        g: channel(slope.1, negative.1, cb.1, cr.1, offset.1),
                        b: channel(slope.2, negative.2, cb.2, cr.2, offset.2))
    }
    #endif
}

#if arch(x86_64)
/// Fixed-point RGB for the 16-bit kernels: 1.0 = 8192 (13 fraction bits), signed 16-bit lanes,
/// so −4…4 is held and saturating arithmetic followed by a clamp is exact.
enum Q13 {
    static let one: Int32 = 8192

    @inline(__always) static func splat(_ v: Int32) -> __m128i {
        unsafeBitCast(SIMD8<Int16>(repeating: Int16(truncatingIfNeeded: v)), to: __m128i.self)
    }

    // Constants as inlined computed values, not `static let`s: a global's lazy initialisation
    // check (`swift_once`) on every use costs more than the instruction it feeds.
    @inline(__always) static var full: __m128i { splat(one) }
    @inline(__always) static var half: __m128i { splat(one / 2) }
    @inline(__always) static var centre: __m128i { splat(128) }

    /// Lanes clamped to 0…1.
    @inline(__always) static func clamp(_ v: __m128i) -> __m128i {
        _mm_min_epi16(_mm_max_epi16(v, _mm_setzero_si128()), full)
    }

    /// a·b for a and b in 0…1 (truncated): `pmulhuw` of a·4 and b·2.
    @inline(__always) static func mul(_ a: __m128i, _ b: __m128i) -> __m128i {
        _mm_mulhi_epu16(_mm_slli_epi16(a, 2), _mm_slli_epi16(b, 1))
    }

    @inline(__always) static func load16(_ p: UnsafePointer<UInt8>) -> __m128i {
        unsafeBitCast(UnsafeRawPointer(p).loadUnaligned(as: SIMD16<UInt8>.self), to: __m128i.self)
    }

    @inline(__always) static func load8(_ p: UnsafePointer<UInt8>) -> __m128i {
        _mm_cvtsi64_si128(UnsafeRawPointer(p).loadUnaligned(as: Int64.self))
    }

    @inline(__always) static func store16(_ v: __m128i, _ p: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(p).storeBytes(of: unsafeBitCast(v, to: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
    }

    @inline(__always) static func store8(_ v: __m128i, _ p: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(p).storeBytes(of: _mm_cvtsi128_si64(v), as: Int64.self)
    }

    // Luma: 16 in the units of `Q13Weights`' products, a half for rounding, and 1 for the
    // truncations' mean (1.5).
    @inline(__always) static var lumaBias: __m128i { splat(16 * 128 + 64 + 1) }
    @inline(__always) static var chromaBias: __m128i { splat(128 * 128 + 64 + 1) }
    @inline(__always) static var ones: __m128i { splat(1) }
}

/// One channel of a 16-bit group: its 32 pixels as four registers (row 0 left, row 0 right,
/// row 1 left, row 1 right), Q13.
struct Q13Channel {
    var l0: __m128i, r0: __m128i, l1: __m128i, r1: __m128i

    @inline(__always) init(_ l0: __m128i, _ r0: __m128i, _ l1: __m128i, _ r1: __m128i) {
        self.l0 = l0; self.r0 = r0; self.l1 = l1; self.r1 = r1
    }

    /// `f` on each register.
    @inline(__always) func map(_ f: (__m128i) -> __m128i) -> Q13Channel { Q13Channel(f(l0), f(r0), f(l1), f(r1)) }

    /// `f` on each register of `self` and `other`.
    @inline(__always) func map(_ other: Q13Channel, _ f: (__m128i, __m128i) -> __m128i) -> Q13Channel {
        Q13Channel(f(l0, other.l0), f(r0, other.r0), f(l1, other.l1), f(r1, other.r1))
    }

    /// The mean over each 2×2 block, ·4 (the sum of four Q13 values), one lane per block.
    @inline(__always) var blockSums: __m128i {
        _mm_packs_epi32(_mm_madd_epi16(_mm_add_epi16(l0, l1), Q13.ones), _mm_madd_epi16(_mm_add_epi16(r0, r1), Q13.ones))
    }
}

/// The weights of `Q13Group.store` in registers, for one matrix (`KernelYCbCr`):
/// Y' = 16 + 219·(Kr R + Kg G + Kb B) as pmulhuw(v·4, K) = 128·219·k·v for v in Q13, and
/// Cb, Cr = 128 + 224·(…) as pmulhw(4·mean, K) = 128·224·k·mean for a mean in Q13.
struct Q13Weights {
    let luma: (__m128i, __m128i, __m128i), cb: (__m128i, __m128i, __m128i), cr: (__m128i, __m128i, __m128i)

    init(_ k: KernelYCbCr) {
        func splat(_ w: (Int16, Int16, Int16)) -> (__m128i, __m128i, __m128i) {
            (Q13.splat(Int32(w.0)), Q13.splat(Int32(w.1)), Q13.splat(Int32(w.2)))
        }
        luma = splat(k.lumaQ13); cb = splat(k.cbQ13); cr = splat(k.crQ13)
    }
}

/// A 16-bit group's RGB, 0…1 in Q13.
struct Q13Group {
    var r: Q13Channel, g: Q13Channel, b: Q13Channel

    /// Writes each pixel's luma and each block's chroma (from the mean of its four RGB values)
    /// with `weights` (the picture's matrix), as `RGBGroup.store` does.
    @inline(__always) func store(_ rows: GroupRows, _ weights: Q13Weights) {
        @inline(__always) func luma(_ r: __m128i, _ g: __m128i, _ b: __m128i) -> __m128i {
            let k = weights.luma
            var s = _mm_add_epi16(_mm_mulhi_epu16(_mm_slli_epi16(r, 2), k.0), Q13.lumaBias)
            s = _mm_add_epi16(s, _mm_mulhi_epu16(_mm_slli_epi16(g, 2), k.1))
            s = _mm_add_epi16(s, _mm_mulhi_epu16(_mm_slli_epi16(b, 2), k.2))
            return _mm_srli_epi16(s, 7)
        }
        Q13.store16(_mm_packus_epi16(luma(r.l0, g.l0, b.l0), luma(r.r0, g.r0, b.r0)), rows.y0)
        Q13.store16(_mm_packus_epi16(luma(r.l1, g.l1, b.l1), luma(r.r1, g.r1, b.r1)), rows.y1)
        let mr = r.blockSums, mg = g.blockSums, mb = b.blockSums
        @inline(__always) func chroma(_ k: (__m128i, __m128i, __m128i)) -> __m128i {
            var s = _mm_add_epi16(_mm_mulhi_epi16(mr, k.0), Q13.chromaBias)
            s = _mm_add_epi16(s, _mm_mulhi_epi16(mg, k.1))
            s = _mm_add_epi16(s, _mm_mulhi_epi16(mb, k.2))
            return _mm_srai_epi16(s, 7)
        }
        let zero = _mm_setzero_si128()
        Q13.store8(_mm_packus_epi16(chroma(weights.cb), zero), rows.u)
        Q13.store8(_mm_packus_epi16(chroma(weights.cr), zero), rows.v)
    }
}
#endif

/// A group's worth of memory (two luma rows of 16, two chroma rows of 8) for the last,
/// narrower group of a row pair: copied in, run like any other, the first `count` pixels
/// copied back.
final class GroupScratch {
    private let base: UnsafeMutablePointer<UInt8>

    init() {
        base = .allocate(capacity: 48)
        base.initialize(repeating: 0, count: 48)
    }

    deinit { base.deallocate() }

    var rows: GroupRows { GroupRows(y0: base, y1: base + 16, u: base + 32, v: base + 40) }

    /// The first `count` (even, < 16) pixels of the group at `source` copied in; the scratch rows.
    func copy(_ source: GroupRows, count: Int) -> GroupRows {
        let s = rows
        s.y0.update(from: source.y0, count: count); s.y1.update(from: source.y1, count: count)
        s.u.update(from: source.u, count: count / 2); s.v.update(from: source.v, count: count / 2)
        return s
    }

    /// The first `count` pixels copied back to `dest`.
    func copyBack(to dest: GroupRows, count: Int) {
        let s = rows
        dest.y0.update(from: s.y0, count: count); dest.y1.update(from: s.y1, count: count)
        dest.u.update(from: s.u, count: count / 2); dest.v.update(from: s.v, count: count / 2)
    }

    /// Calls `body(rows, y, x)` for every 16-pixel group of `image` (even width and height)
    /// from column `from` (a multiple of 16) on, row pairs top to bottom: `y` and `x` are the
    /// group's top-left pixel, `rows` its memory. The last, narrower group of a row pair goes
    /// through a scratch copy (the same code on every pixel), its first pixels copied back
    /// afterwards.
    @inline(__always) static func forEachGroup(of image: YUVImage, from: Int = 0, _ body: (GroupRows, Int, Int) -> Void) {
        let width = image.width, whole = width & ~15
        let scratch = GroupScratch()
        for cy in 0..<(image.height / 2) {
            let rows = GroupRows(image, cy: cy)
            var x = from
            while x < whole {
                body(rows.advanced(by: x), 2 * cy, x)
                x += 16
            }
            if x < width {
                let n = width - x
                body(scratch.copy(rows.advanced(by: x), count: n), 2 * cy, x)
                scratch.copyBack(to: rows.advanced(by: x), count: n)
            }
        }
    }
}
