// The body of ReelKernels' FixedBlend (a layer composited onto a frame with a W3C blend mode, in
// Q13 fixed point) for wide registers, included by fixed_point_avx2.c and fixed_point_avx512.c
// after fixed_affine_kernel.h, whose helpers it uses: both pictures read through the identity
// map, B(Cb, Cs) per channel, source-over by alpha × opacity, luma and chroma written as the
// affine kernel writes them. Every lane gets the same integer and IEEE `float` operations as the
// Swift kernel's, so the same bytes (FixedBlendTests compare them).
//
// Lanes hold pixels in the order fixed_affine_kernel.h describes (unpacks within 128-bit parts);
// the alpha bytes are widened by the same unpacks, so each weight lands on its pixel.
//
// The including file defines, besides fixed_affine_kernel.h's macros: BLEND_FUNCTION (the
// exported name), VF (the float register type), SELECT_GT(a, b, yes, no) and
// SELECT_EQ(a, b, yes, no) (per 16-bit lane: a > b, or a == b, ? yes : no).

/// a·b for a and b in 0…1 (truncated): `pmulhuw` of a·4 and b·2, as `Q13.mul`.
KERNEL V q13_mul(V a, V b) {
    return OP(mulhi_epu16)(OP(slli_epi16)(a, 2), OP(slli_epi16)(b, 1));
}

KERNEL V screen(V b, V s) {
    return OP(sub_epi16)(OP(add_epi16)(b, s), q13_mul(b, s));
}

/// Cs ≤ 0.5: Multiply(Cb, 2Cs); else Screen(Cb, 2Cs − 1).
KERNEL V hard_light(V cb, V cs) {
    V twice = OP(slli_epi16)(cs, 1);
    V multiply = q13_mul(cb, twice);
    V screened = screen(cb, OP(sub_epi16)(twice, full()));
    return SELECT_GT(cs, OP(set1_epi16)(4096), screened, multiply);
}

/// √v for v in 0…1 (Q13), through `float`: √(v·8192), rounded to nearest.
KERNEL V square_root(V v) {
    const V zero = ZERO();
    const VF scale = OP(set1_ps)(8192.0f);
    VF lo = OP(sqrt_ps)(OP(mul_ps)(OP(cvtepi32_ps)(OP(unpacklo_epi16)(v, zero)), scale));
    VF hi = OP(sqrt_ps)(OP(mul_ps)(OP(cvtepi32_ps)(OP(unpackhi_epi16)(v, zero)), scale));
    return OP(packs_epi32)(OP(cvtps_epi32)(lo), OP(cvtps_epi32)(hi));
}

/// min(1, n / d) for n, d in 0…1 (Q13), through `float` (d = 0 gives 1; callers mask it).
KERNEL V divide(V n, V d) {
    const V zero = ZERO();
    const VF one = OP(set1_ps)(8192.0f), half = OP(set1_ps)(0.5f);
    VF qlo = OP(div_ps)(OP(cvtepi32_ps)(OP(unpacklo_epi16)(n, zero)), OP(max_ps)(OP(cvtepi32_ps)(OP(unpacklo_epi16)(d, zero)), half));
    VF qhi = OP(div_ps)(OP(cvtepi32_ps)(OP(unpackhi_epi16)(n, zero)), OP(max_ps)(OP(cvtepi32_ps)(OP(unpackhi_epi16)(d, zero)), half));
    return OP(packs_epi32)(OP(cvtps_epi32)(OP(min_ps)(OP(mul_ps)(qlo, one), one)),
                           OP(cvtps_epi32)(OP(min_ps)(OP(mul_ps)(qhi, one), one)));
}

/// Cs ≤ 0.5: Cb − (1 − 2Cs)·Cb·(1 − Cb); else Cb + (2Cs − 1)·(D(Cb) − Cb), D as the Swift
/// kernel works it out (the cubic as 4Cb·(4Cb² − 3Cb + 1)).
KERNEL V soft_light(V cb, V cs) {
    V twice = OP(slli_epi16)(cs, 1);
    V low = OP(sub_epi16)(cb, q13_mul(OP(sub_epi16)(full(), twice), q13_mul(cb, OP(sub_epi16)(full(), cb))));
    V cb4 = OP(slli_epi16)(cb, 2);
    V inner = OP(add_epi16)(OP(sub_epi16)(OP(slli_epi16)(q13_mul(cb, cb), 2), OP(add_epi16)(cb, OP(slli_epi16)(cb, 1))), full());
    V cubic = q13_mul(cb4, inner);
    V d = SELECT_GT(cb, OP(set1_epi16)(2048), square_root(cb), cubic);
    V high = OP(add_epi16)(cb, q13_mul(OP(sub_epi16)(twice, full()), OP(max_epi16)(OP(sub_epi16)(d, cb), ZERO())));
    return SELECT_GT(cs, OP(set1_epi16)(4096), high, low);
}

/// Cb = 0 → 0; Cs = 1 → 1; else min(1, Cb / (1 − Cs)).
KERNEL V color_dodge(V cb, V cs) {
    V ratio = divide(cb, OP(sub_epi16)(full(), cs));
    V r = SELECT_EQ(cs, full(), full(), ratio);
    return SELECT_EQ(cb, ZERO(), ZERO(), r);
}

/// Cb = 1 → 1; Cs = 0 → 0; else 1 − min(1, (1 − Cb) / Cs).
KERNEL V color_burn(V cb, V cs) {
    V r = SELECT_EQ(cs, ZERO(), ZERO(), OP(sub_epi16)(full(), divide(OP(sub_epi16)(full(), cb), cs)));
    return SELECT_EQ(cb, full(), full(), r);
}

/// B(Cb, Cs) for the mode (REEL_BLEND_…; a constant where this is inlined).
KERNEL V blend_mode(int mode, V b, V s) {
    switch (mode) {
    case REEL_BLEND_MULTIPLY: return q13_mul(b, s);
    case REEL_BLEND_SCREEN: return screen(b, s);
    case REEL_BLEND_OVERLAY: return hard_light(s, b);
    case REEL_BLEND_DARKEN: return OP(min_epi16)(b, s);
    case REEL_BLEND_LIGHTEN: return OP(max_epi16)(b, s);
    case REEL_BLEND_COLOR_DODGE: return color_dodge(b, s);
    case REEL_BLEND_COLOR_BURN: return color_burn(b, s);
    case REEL_BLEND_HARD_LIGHT: return hard_light(b, s);
    case REEL_BLEND_SOFT_LIGHT: return soft_light(b, s);
    case REEL_BLEND_DIFFERENCE: return OP(max_epi16)(OP(sub_epi16)(b, s), OP(sub_epi16)(s, b));
    case REEL_BLEND_EXCLUSION: return OP(sub_epi16)(OP(add_epi16)(b, s), OP(slli_epi16)(q13_mul(b, s), 1));
    case REEL_BLEND_ADD: return OP(min_epi16)(OP(add_epi16)(b, s), full());
    default: return s;   // normal
    }
}

/// Cb + (B − Cb)·w for the four registers of one channel: `pmulhw` of 2·(B − Cb) and w (Q15).
KERNEL void composite(int mode, V cb[4], const V cs[4], const V w[4]) {
    for (int i = 0; i < 4; i++) {
        V mixed = OP(slli_epi16)(OP(sub_epi16)(blend_mode(mode, cb[i], cs[i]), cb[i]), 1);
        cb[i] = OP(add_epi16)(cb[i], OP(mulhi_epi16)(mixed, w[i]));
    }
}

KERNEL void blend_rows(int mode, const reel_fixed_affine *map, int16_t opacity, const reel_planes *layer, const reel_planes *frame,
                       long columns, long height) {
    channel_map m[3];
    const int same_slopes = load_maps(map, m);
    const V op = OP(set1_epi16)(opacity), opaque = OP(set1_epi8)((char)255);
    for (long cy = 0; cy < height / 2; cy++) {
        const uint8_t *sy0 = layer->y + 2 * cy * layer->ystride, *sy1 = sy0 + layer->ystride;
        const uint8_t *su = layer->u + cy * layer->ustride, *sv = layer->v + cy * layer->vstride;
        const uint8_t *sa0 = layer->a ? layer->a + 2 * cy * layer->astride : NULL, *sa1 = sa0 ? sa0 + layer->astride : NULL;
        uint8_t *y0 = frame->y + 2 * cy * frame->ystride, *y1 = y0 + frame->ystride;
        uint8_t *pu = frame->u + cy * frame->ustride, *pv = frame->v + cy * frame->vstride;
        for (long x = 0; x < columns; x += STEP) {
            V sr[4], sg[4], sb[4], br[4], bg[4], bb[4];
            read_group(m, same_slopes, sy0 + x, sy1 + x, su + x / 2, sv + x / 2, sr, sg, sb);
            read_group(m, same_slopes, y0 + x, y1 + x, pu + x / 2, pv + x / 2, br, bg, bb);
            // alpha·257 (the byte in both halves of a lane), times the opacity in Q15.
            const V a0 = sa0 ? LOAD(sa0 + x) : opaque, a1 = sa1 ? LOAD(sa1 + x) : opaque;
            const V w[4] = {OP(mulhi_epu16)(OP(unpacklo_epi8)(a0, a0), op), OP(mulhi_epu16)(OP(unpackhi_epi8)(a0, a0), op),
                            OP(mulhi_epu16)(OP(unpacklo_epi8)(a1, a1), op), OP(mulhi_epu16)(OP(unpackhi_epi8)(a1, a1), op)};
            composite(mode, br, sr, w);
            composite(mode, bg, sg, w);
            composite(mode, bb, sb, w);
            write_group(map, br, bg, bb, y0 + x, y1 + x, pu + x / 2, pv + x / 2);
        }
    }
}

__attribute__((target(TARGET)))
void BLEND_FUNCTION(int mode, const reel_fixed_affine *map, int16_t opacity, const reel_planes *layer, const reel_planes *frame,
                    long columns, long height) {
    // One loop per mode, each with its mode a constant (blend_rows is inlined into every case).
#define BLEND_CASE(m) case m: blend_rows(m, map, opacity, layer, frame, columns, height); break;
    switch (mode) {
    BLEND_CASE(REEL_BLEND_MULTIPLY) BLEND_CASE(REEL_BLEND_SCREEN) BLEND_CASE(REEL_BLEND_OVERLAY)
    BLEND_CASE(REEL_BLEND_DARKEN) BLEND_CASE(REEL_BLEND_LIGHTEN) BLEND_CASE(REEL_BLEND_COLOR_DODGE)
    BLEND_CASE(REEL_BLEND_COLOR_BURN) BLEND_CASE(REEL_BLEND_HARD_LIGHT) BLEND_CASE(REEL_BLEND_SOFT_LIGHT)
    BLEND_CASE(REEL_BLEND_DIFFERENCE) BLEND_CASE(REEL_BLEND_EXCLUSION) BLEND_CASE(REEL_BLEND_ADD)
    default: blend_rows(REEL_BLEND_NORMAL, map, opacity, layer, frame, columns, height); break;
    }
#undef BLEND_CASE
}
