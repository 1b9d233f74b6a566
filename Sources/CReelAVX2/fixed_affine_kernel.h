// The body of ReelKernels' FixedAffine (a clamped affine map of RGB in Q13 fixed point,
// 1.0 = 8192) for wide registers, written once and included by fixed_point_avx2.c (32 pixels
// of two rows a step) and fixed_point_avx512.c (64): integer operations, each the same as the
// Swift kernel's on every lane, so the same bytes (FixedAffineTests compare them).
// fixed_blend_kernel.h, included after it, builds the blend modes from its helpers.
//
// AVX2's and AVX-512's unpacks and packs work within each 128-bit part of a register, so the
// pixels of a register are 0–7 of each 16 (or 8–15), and chroma blocks, widened in order,
// duplicate into exactly those pixels; packing back puts everything in order again.
//
// The including file defines: KERNEL (static inline, always inlined, with its target),
// FUNCTION (the exported name), TARGET (its target string), STEP (pixels a step), V (the
// register type), OP(name) (the intrinsic `name` for V), ZERO(), LOAD(p) and STORE(p, v) (a
// register of bytes), CHROMA_LOAD(p) (STEP / 2 bytes widened to 16-bit lanes) and
// CHROMA_STORE(words, p) (STEP / 2 16-bit lanes as bytes, saturated as `packuswb`),
// CURVE_GATHER(table, v) (each 16-bit lane of v, 0…8192, replaced by table[lane]).

typedef struct {
    V slope, cb, cr, offset;
    int negative;
} channel_map;

/// 1.0 in Q13 in every lane.
KERNEL V full(void) { return OP(set1_epi16)(8192); }

/// Lanes clamped to 0…1 (0…8192).
KERNEL V clamp(V v) {
    return OP(min_epi16)(OP(max_epi16)(v, ZERO()), full());
}

/// One channel at four registers of pixels (row 0 left/right, row 1 left/right), from the
/// products luma·slope `t` and the blocks' (Cb − 128)·256, (Cr − 128)·256.
KERNEL void channel(const channel_map *m, const V t[4], V du, V dv, V out[4]) {
    V w = OP(adds_epi16)(OP(adds_epi16)(OP(mulhi_epi16)(du, m->cb), OP(mulhi_epi16)(dv, m->cr)), m->offset);
    V wl = OP(unpacklo_epi16)(w, w), wh = OP(unpackhi_epi16)(w, w);
    for (int i = 0; i < 4; i++) {
        V c = (i & 1) ? wh : wl;
        out[i] = clamp(m->negative ? OP(subs_epi16)(c, t[i]) : OP(adds_epi16)(c, t[i]));
    }
}

/// luma·256 times the channel's |slope| (`pmulhuw`), at four registers.
KERNEL void products(const channel_map *m, const V y[4], V t[4]) {
    for (int i = 0; i < 4; i++) t[i] = OP(mulhi_epu16)(y[i], m->slope);
}

/// Y' = 16 + 219·(Kr R + Kg G + Kb B) from Q13 with the weights `k` (`store_luma`), as
/// `Q13Group.store`.
KERNEL V luma(const int16_t k[3], V r, V g, V b) {
    V s = OP(add_epi16)(OP(mulhi_epu16)(OP(slli_epi16)(r, 2), OP(set1_epi16)(k[0])), OP(set1_epi16)(16 * 128 + 64 + 1));
    s = OP(add_epi16)(s, OP(mulhi_epu16)(OP(slli_epi16)(g, 2), OP(set1_epi16)(k[1])));
    s = OP(add_epi16)(s, OP(mulhi_epu16)(OP(slli_epi16)(b, 2), OP(set1_epi16)(k[2])));
    return OP(srli_epi16)(s, 7);
}

/// Each 2×2 block's sum of four Q13 values, one lane per block, blocks in order.
KERNEL V block_sums(const V c[4]) {
    const V ones = OP(set1_epi16)(1);
    return OP(packs_epi32)(OP(madd_epi16)(OP(add_epi16)(c[0], c[2]), ones), OP(madd_epi16)(OP(add_epi16)(c[1], c[3]), ones));
}

/// Cb or Cr = 128 + 224·(…) of the blocks' mean RGB with the weights `k` (`store_cb` or
/// `store_cr`), as `Q13Group.store`.
KERNEL V chroma(V mr, V mg, V mb, const int16_t k[3]) {
    V s = OP(add_epi16)(OP(mulhi_epi16)(mr, OP(set1_epi16)(k[0])), OP(set1_epi16)(128 * 128 + 64 + 1));
    s = OP(add_epi16)(s, OP(mulhi_epi16)(mg, OP(set1_epi16)(k[1])));
    s = OP(add_epi16)(s, OP(mulhi_epi16)(mb, OP(set1_epi16)(k[2])));
    return OP(srai_epi16)(s, 7);
}

/// (C − 128)·256 of STEP / 2 chroma samples.
KERNEL V centred(const uint8_t *p) {
    return OP(slli_epi16)(OP(sub_epi16)(CHROMA_LOAD(p), OP(set1_epi16)(128)), 8);
}

/// The map's terms in registers; returns whether the three channels' slopes are the same
/// (then one luma product serves all three: the same values, fewer multiplies).
KERNEL int load_maps(const reel_fixed_affine *map, channel_map m[3]) {
    for (int c = 0; c < 3; c++) {
        m[c].slope = OP(set1_epi16)(map->slope[c]);
        m[c].cb = OP(set1_epi16)(map->cb[c]);
        m[c].cr = OP(set1_epi16)(map->cr[c]);
        m[c].offset = OP(set1_epi16)(map->offset[c]);
        m[c].negative = map->negative[c];
    }
    return map->slope[0] == map->slope[1] && map->slope[1] == map->slope[2];
}

/// The map of one group, clamped, as four registers of each channel: its two luma rows at `y0`
/// and `y1`, its chroma at `u` and `v`. `same_slopes` as `load_maps` returned it.
KERNEL void read_group(const channel_map m[3], int same_slopes, const uint8_t *y0, const uint8_t *y1, const uint8_t *u,
                       const uint8_t *v, V r[4], V g[4], V b[4]) {
    const V zero = ZERO();
    const V du = centred(u), dv = centred(v);
    const V l0 = LOAD(y0), l1 = LOAD(y1);
    // Luma·256: the byte in each lane's high half.
    const V l[4] = {OP(unpacklo_epi8)(zero, l0), OP(unpackhi_epi8)(zero, l0), OP(unpacklo_epi8)(zero, l1), OP(unpackhi_epi8)(zero, l1)};
    V t[4];
    products(&m[0], l, t);
    channel(&m[0], t, du, dv, r);
    if (!same_slopes) products(&m[1], l, t);
    channel(&m[1], t, du, dv, g);
    if (!same_slopes) products(&m[2], l, t);
    channel(&m[2], t, du, dv, b);
}

/// Writes the group's luma per pixel and chroma per block from its RGB with `map`'s store
/// weights (as `Q13Group.store`).
KERNEL void write_group(const reel_fixed_affine *map, const V r[4], const V g[4], const V b[4], uint8_t *y0, uint8_t *y1, uint8_t *u,
                        uint8_t *v) {
    STORE(y0, OP(packus_epi16)(luma(map->store_luma, r[0], g[0], b[0]), luma(map->store_luma, r[1], g[1], b[1])));
    STORE(y1, OP(packus_epi16)(luma(map->store_luma, r[2], g[2], b[2]), luma(map->store_luma, r[3], g[3], b[3])));
    const V mr = block_sums(r), mg = block_sums(g), mb = block_sums(b);
    CHROMA_STORE(chroma(mr, mg, mb, map->store_cb), u);
    CHROMA_STORE(chroma(mr, mg, mb, map->store_cr), v);
}

/// The affine loop; `curve` (a constant NULL or not where this is inlined) after the clamp:
/// 8193 entries and one more, read by 32-bit gathers, looked up as `FixedAffine.Curve.apply`
/// does.
KERNEL void affine_rows(const reel_fixed_affine *map, const int16_t *curve, uint8_t *y, long ystride, uint8_t *u, long ustride,
                        uint8_t *v, long vstride, long columns, long height) {
    channel_map m[3];
    const int same_slopes = load_maps(map, m);
    for (long cy = 0; cy < height / 2; cy++) {
        uint8_t *y0 = y + 2 * cy * ystride, *y1 = y0 + ystride, *pu = u + cy * ustride, *pv = v + cy * vstride;
        for (long x = 0; x < columns; x += STEP) {
            V r[4], g[4], b[4];
            read_group(m, same_slopes, y0 + x, y1 + x, pu + x / 2, pv + x / 2, r, g, b);
            if (curve) {
                for (int i = 0; i < 4; i++) {
                    r[i] = CURVE_GATHER(curve, r[i]);
                    g[i] = CURVE_GATHER(curve, g[i]);
                    b[i] = CURVE_GATHER(curve, b[i]);
                }
            }
            write_group(map, r, g, b, y0 + x, y1 + x, pu + x / 2, pv + x / 2);
        }
    }
}

__attribute__((target(TARGET)))
void FUNCTION(const reel_fixed_affine *map, const int16_t *curve, uint8_t *y, long ystride, uint8_t *u, long ustride,
              uint8_t *v, long vstride, long columns, long height) {
    if (curve) affine_rows(map, curve, y, ystride, u, ustride, v, vstride, columns, height);
    else affine_rows(map, NULL, y, ystride, u, ustride, v, vstride, columns, height);
}
