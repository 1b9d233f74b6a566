#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif
import CReelAVX2
import ReelCore

/// `BlendModeKernel` in 16-bit fixed point (`Q13`): both pictures read as clamped RGB, the
/// mode's `B(Cb, Cs)` per channel, source-over by the layer's alpha × opacity, luma written per
/// pixel and chroma from each block's mean. Eight pixels a register; the modes that divide
/// (colour dodge and burn) and soft light's square root go through `Float` for those steps only.
///
/// The same formulas as the `Float` kernel, with results within a code value of the exact
/// ones, but for colour dodge and burn where a channel lies within about 10⁻⁴ of 0 or 1
/// before clamping: there those formulas jump between their extremes, as they do on any
/// rounding of the input (the `Float` kernel's too, at 10⁻⁵). x86-64 only (elsewhere
/// `BlendModeKernel` runs its `Float` loop).
enum FixedBlend {
    #if arch(x86_64)
    /// `layer` (with an alpha plane, same size as `frame`, even width and height) onto `frame`.
    /// On a CPU with AVX2 or AVX-512BW (`isa`), whole groups of 32 or 64 pixels run in that
    /// kernel (`CReelAVX2`, the same operations, so the same bytes) and the rest of each row
    /// pair here.
    static func blend(_ layer: YUVImage, onto frame: YUVImage, mode: BlendMode, opacity: Double, colour: KernelYCbCr = .bt601,
                      isa: VectorISA = .detected) {
        let c = (layer, frame, opacity, colour, isa)
        switch mode {
        case .normal: run(c, REEL_BLEND_NORMAL) { _, s in s }
        case .multiply: run(c, REEL_BLEND_MULTIPLY) { b, s in Q13.mul(b, s) }
        case .screen: run(c, REEL_BLEND_SCREEN) { b, s in screen(b, s) }
        case .overlay: run(c, REEL_BLEND_OVERLAY) { b, s in hardLight(s, b) }
        case .darken: run(c, REEL_BLEND_DARKEN) { b, s in _mm_min_epi16(b, s) }
        case .lighten: run(c, REEL_BLEND_LIGHTEN) { b, s in _mm_max_epi16(b, s) }
        case .colorDodge: run(c, REEL_BLEND_COLOR_DODGE) { b, s in colorDodge(b, s) }
        case .colorBurn: run(c, REEL_BLEND_COLOR_BURN) { b, s in colorBurn(b, s) }
        case .hardLight: run(c, REEL_BLEND_HARD_LIGHT) { b, s in hardLight(b, s) }
        case .softLight: run(c, REEL_BLEND_SOFT_LIGHT) { b, s in softLight(b, s) }
        case .difference: run(c, REEL_BLEND_DIFFERENCE) { b, s in _mm_max_epi16(_mm_sub_epi16(b, s), _mm_sub_epi16(s, b)) }
        case .exclusion: run(c, REEL_BLEND_EXCLUSION) { b, s in _mm_sub_epi16(_mm_add_epi16(b, s), _mm_slli_epi16(Q13.mul(b, s), 1)) }
        case .add: run(c, REEL_BLEND_ADD) { b, s in _mm_min_epi16(_mm_add_epi16(b, s), Q13.full) }
        }
    }

    /// The loop, with `B(Cb, Cs)` = `mode` on 8 lanes of backdrop and source; `vectorMode` is
    /// the same mode for the AVX kernels.
    @inline(__always)
    private static func run(_ c: (layer: YUVImage, frame: YUVImage, opacity: Double, colour: KernelYCbCr, isa: VectorISA), _ vectorMode: Int,
                            _ mode: (__m128i, __m128i) -> __m128i) {
        let (layer, frame, opacity) = (c.layer, c.frame, c.opacity)
        precondition(layer.width == frame.width && layer.height == frame.height && layer.width % 2 == 0 && layer.height % 2 == 0)
        let read = FixedAffine.identity(c.colour)!
        // alpha·257 (0…65535) times opacity in Q15: the weight in Q15.
        let weightQ15 = Int32((min(max(opacity, 0), 1) * 32767).rounded())
        let op = Q13.splat(weightQ15)
        let width = frame.width, whole = width & ~15
        let from = c.isa.vectorColumns(width)
        var terms = read.terms, source = reel_planes(layer), backdrop = reel_planes(frame)
        switch c.isa {
        case .avx512: reel_fixed_blend_avx512(Int32(vectorMode), &terms, Int16(weightQ15), &source, &backdrop, from, frame.height)
        case .avx2: reel_fixed_blend_avx2(Int32(vectorMode), &terms, Int16(weightQ15), &source, &backdrop, from, frame.height)
        case .baseline: break
        }
        let layerScratch = GroupScratch(), frameScratch = GroupScratch(), alphaScratch = GroupScratch()
        let opaque = GroupScratch()
        opaque.rows.y0.update(repeating: 255, count: 32)

        @inline(__always) func group(_ s: GroupRows, _ b: GroupRows, _ alpha0: UnsafePointer<UInt8>, _ alpha1: UnsafePointer<UInt8>) {
            let source = read.load(s), backdrop = read.load(b)
            let a0 = Q13.load16(alpha0), a1 = Q13.load16(alpha1)
            // alpha·257 is the byte in both halves of the lane; then × opacity.
            @inline(__always) func weight(_ v: __m128i) -> __m128i { _mm_mulhi_epu16(v, op) }
            let w = Q13Channel(weight(_mm_unpacklo_epi8(a0, a0)), weight(_mm_unpackhi_epi8(a0, a0)),
                               weight(_mm_unpacklo_epi8(a1, a1)), weight(_mm_unpackhi_epi8(a1, a1)))
            @inline(__always) func composite(_ cb: Q13Channel, _ cs: Q13Channel) -> Q13Channel {
                let blended = cb.map(cs, mode)
                // Cb + (B − Cb)·w: pmulhw of 2·(B − Cb) and w (Q15).
                let mixed = blended.map(cb) { x, y in _mm_slli_epi16(_mm_sub_epi16(x, y), 1) }
                return Q13Channel(_mm_add_epi16(cb.l0, _mm_mulhi_epi16(mixed.l0, w.l0)), _mm_add_epi16(cb.r0, _mm_mulhi_epi16(mixed.r0, w.r0)),
                                  _mm_add_epi16(cb.l1, _mm_mulhi_epi16(mixed.l1, w.l1)), _mm_add_epi16(cb.r1, _mm_mulhi_epi16(mixed.r1, w.r1)))
            }
            Q13Group(r: composite(backdrop.r, source.r), g: composite(backdrop.g, source.g), b: composite(backdrop.b, source.b))
                .store(b, read.weights)
        }

        for cy in 0..<(frame.height / 2) {
            let s = GroupRows(layer, cy: cy), b = GroupRows(frame, cy: cy)
            // Without an alpha plane every pixel is opaque: the alpha rows are a group of 255s.
            let a0 = layer.a.map { UnsafePointer($0.row(2 * cy)) }, a1 = layer.a.map { UnsafePointer($0.row(2 * cy + 1)) }
            let solid = UnsafePointer(opaque.rows.y0)
            var x = from
            while x < whole {
                group(s.advanced(by: x), b.advanced(by: x), a0.map { $0 + x } ?? solid, a1.map { $0 + x } ?? solid)
                x += 16
            }
            if x < width {
                let n = width - x
                let ls = layerScratch.copy(s.advanced(by: x), count: n), fs = frameScratch.copy(b.advanced(by: x), count: n)
                let alpha = alphaScratch.rows
                if let a0, let a1 {
                    alpha.y0.update(from: a0 + x, count: n); alpha.y1.update(from: a1 + x, count: n)
                } else {
                    alpha.y0.update(repeating: 255, count: 32)
                }
                group(ls, fs, alpha.y0, alpha.y1)
                frameScratch.copyBack(to: b.advanced(by: x), count: n)
            }
        }
    }

    @inline(__always) static func screen(_ b: __m128i, _ s: __m128i) -> __m128i {
        _mm_sub_epi16(_mm_add_epi16(b, s), Q13.mul(b, s))
    }

    /// Cs ≤ 0.5: Multiply(Cb, 2Cs); else Screen(Cb, 2Cs − 1). (Overlay is this with the
    /// roles swapped.)
    @inline(__always) static func hardLight(_ cb: __m128i, _ cs: __m128i) -> __m128i {
        let twice = _mm_slli_epi16(cs, 1)
        let multiply = Q13.mul(cb, twice)
        let screened = screen(cb, _mm_sub_epi16(twice, Q13.full))
        return select(_mm_cmpgt_epi16(cs, Q13.half), screened, multiply)
    }

    /// Cs ≤ 0.5: Cb − (1 − 2Cs)·Cb·(1 − Cb); else Cb + (2Cs − 1)·(D(Cb) − Cb), with
    /// D(Cb) = Cb ≤ 0.25 ? ((16Cb − 12)·Cb + 4)·Cb : √Cb. The cubic is worked out as
    /// 4Cb·(4Cb² − 3Cb + 1) so every term stays within Q13's range.
    @inline(__always) static func softLight(_ cb: __m128i, _ cs: __m128i) -> __m128i {
        let twice = _mm_slli_epi16(cs, 1)
        let low = _mm_sub_epi16(cb, Q13.mul(_mm_sub_epi16(Q13.full, twice), Q13.mul(cb, _mm_sub_epi16(Q13.full, cb))))
        let cb4 = _mm_slli_epi16(cb, 2)
        let inner = _mm_add_epi16(_mm_sub_epi16(_mm_slli_epi16(Q13.mul(cb, cb), 2), _mm_add_epi16(cb, _mm_slli_epi16(cb, 1))), Q13.full)
        let cubic = Q13.mul(cb4, inner)
        let d = select(_mm_cmpgt_epi16(cb, quarter), squareRoot(cb), cubic)
        // D(Cb) ≥ Cb; the max keeps a truncated cubic one unit under Cb from wrapping around.
        let high = _mm_add_epi16(cb, Q13.mul(_mm_sub_epi16(twice, Q13.full), _mm_max_epi16(_mm_sub_epi16(d, cb), _mm_setzero_si128())))
        return select(_mm_cmpgt_epi16(cs, Q13.half), high, low)
    }

    /// Cb = 0 → 0; Cs = 1 → 1; else min(1, Cb / (1 − Cs)).
    @inline(__always) static func colorDodge(_ cb: __m128i, _ cs: __m128i) -> __m128i {
        let ratio = divide(cb, _mm_sub_epi16(Q13.full, cs))
        let r = select(_mm_cmpeq_epi16(cs, Q13.full), Q13.full, ratio)
        return _mm_andnot_si128(_mm_cmpeq_epi16(cb, _mm_setzero_si128()), r)
    }

    /// Cb = 1 → 1; Cs = 0 → 0; else 1 − min(1, (1 − Cb) / Cs).
    @inline(__always) static func colorBurn(_ cb: __m128i, _ cs: __m128i) -> __m128i {
        let r = _mm_andnot_si128(_mm_cmpeq_epi16(cs, _mm_setzero_si128()), _mm_sub_epi16(Q13.full, divide(_mm_sub_epi16(Q13.full, cb), cs)))
        return select(_mm_cmpeq_epi16(cb, Q13.full), Q13.full, r)
    }

    @inline(__always) static var quarter: __m128i { Q13.splat(Q13.one / 4) }

    /// `yes` where `mask` is set, else `no`.
    @inline(__always) static func select(_ mask: __m128i, _ yes: __m128i, _ no: __m128i) -> __m128i {
        _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no))
    }

    /// min(1, n / d) for n, d in 0…1 (Q13), through `Float` (d = 0 gives 1; callers mask it).
    @inline(__always) static func divide(_ n: __m128i, _ d: __m128i) -> __m128i {
        let zero = _mm_setzero_si128()
        @inline(__always) func half(_ n: __m128i, _ d: __m128i) -> __m128i {
            let q = _mm_div_ps(_mm_cvtepi32_ps(n), _mm_max_ps(_mm_cvtepi32_ps(d), Lanes4(repeating: 0.5)))
            return _mm_cvtps_epi32(_mm_min_ps(_mm_mul_ps(q, Lanes4(repeating: Float(Q13.one))), Lanes4(repeating: Float(Q13.one))))
        }
        return _mm_packs_epi32(half(_mm_unpacklo_epi16(n, zero), _mm_unpacklo_epi16(d, zero)),
                               half(_mm_unpackhi_epi16(n, zero), _mm_unpackhi_epi16(d, zero)))
    }

    /// √v for v in 0…1 (Q13), through `Float`: √(v·8192).
    @inline(__always) static func squareRoot(_ v: __m128i) -> __m128i {
        let zero = _mm_setzero_si128()
        @inline(__always) func half(_ v: __m128i) -> __m128i {
            _mm_cvtps_epi32(_mm_sqrt_ps(_mm_mul_ps(_mm_cvtepi32_ps(v), Lanes4(repeating: Float(Q13.one)))))
        }
        return _mm_packs_epi32(half(_mm_unpacklo_epi16(v, zero)), half(_mm_unpackhi_epi16(v, zero)))
    }
    #endif
}

#if arch(x86_64)
extension reel_planes {
    /// The planes of `image` for the AVX kernels (`a` NULL when it has no alpha plane).
    init(_ image: YUVImage) {
        self.init(y: image.y.base, u: image.u.base, v: image.v.base, a: image.a?.base,
                  ystride: image.y.stride, ustride: image.u.stride, vstride: image.v.stride, astride: image.a?.stride ?? 0)
    }
}
#endif
