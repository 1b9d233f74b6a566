// ReelKernels' FixedAffine (a clamped affine map of RGB in Q13 fixed point, 1.0 = 8192) for
// CPUs with AVX2: 32 pixels of two rows (16 chroma blocks) a step where the Swift kernel does
// 16. Integer operations, each the same as the Swift kernel's on every lane, so the same
// bytes (FixedAffineTests compare them). AVX2's unpacks and packs work within each 128-bit
// half, so the pixels of a register are 0–7 and 16–23 (or 8–15 and 24–31), and chroma blocks,
// widened in order, duplicate into exactly those pixels.

#include "CReelAVX2.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define KERNEL static inline __attribute__((always_inline, target("avx2")))

typedef struct {
    __m256i slope, cb, cr, offset;
    int negative;
} channel_map;

/// Lanes clamped to 0…1 (0…8192).
KERNEL __m256i clamp(__m256i v) {
    return _mm256_min_epi16(_mm256_max_epi16(v, _mm256_setzero_si256()), _mm256_set1_epi16(8192));
}

/// One channel at four registers of pixels (row 0 left/right, row 1 left/right), from luma·256
/// and the blocks' (Cb − 128)·256, (Cr − 128)·256.
KERNEL void channel(const channel_map *m, const __m256i y[4], __m256i du, __m256i dv, __m256i out[4]) {
    __m256i w = _mm256_adds_epi16(_mm256_adds_epi16(_mm256_mulhi_epi16(du, m->cb), _mm256_mulhi_epi16(dv, m->cr)), m->offset);
    __m256i wl = _mm256_unpacklo_epi16(w, w), wh = _mm256_unpackhi_epi16(w, w);
    for (int i = 0; i < 4; i++) {
        __m256i t = _mm256_mulhi_epu16(y[i], m->slope), c = (i & 1) ? wh : wl;
        out[i] = clamp(m->negative ? _mm256_subs_epi16(c, t) : _mm256_adds_epi16(c, t));
    }
}

/// Y' = 16 + 219·(0.299 R + 0.587 G + 0.114 B) from Q13, as `Q13Group.store`.
KERNEL __m256i luma(__m256i r, __m256i g, __m256i b) {
    __m256i s = _mm256_add_epi16(_mm256_mulhi_epu16(_mm256_slli_epi16(r, 2), _mm256_set1_epi16(16763)), _mm256_set1_epi16(16 * 128 + 64 + 1));
    s = _mm256_add_epi16(s, _mm256_mulhi_epu16(_mm256_slli_epi16(g, 2), _mm256_set1_epi16((short)32910)));
    s = _mm256_add_epi16(s, _mm256_mulhi_epu16(_mm256_slli_epi16(b, 2), _mm256_set1_epi16(6391)));
    return _mm256_srli_epi16(s, 7);
}

/// Each 2×2 block's sum of four Q13 values, one lane per block, blocks in order.
KERNEL __m256i block_sums(const __m256i c[4]) {
    const __m256i ones = _mm256_set1_epi16(1);
    return _mm256_packs_epi32(_mm256_madd_epi16(_mm256_add_epi16(c[0], c[2]), ones),
                              _mm256_madd_epi16(_mm256_add_epi16(c[1], c[3]), ones));
}

/// Cb or Cr = 128 + 224·(…) of the blocks' mean RGB, as `Q13Group.store`.
KERNEL __m256i chroma(__m256i mr, __m256i mg, __m256i mb, short k0, short k1, short k2) {
    __m256i s = _mm256_add_epi16(_mm256_mulhi_epi16(mr, _mm256_set1_epi16(k0)), _mm256_set1_epi16(128 * 128 + 64 + 1));
    s = _mm256_add_epi16(s, _mm256_mulhi_epi16(mg, _mm256_set1_epi16(k1)));
    s = _mm256_add_epi16(s, _mm256_mulhi_epi16(mb, _mm256_set1_epi16(k2)));
    return _mm256_srai_epi16(s, 7);
}

/// 16 words as 16 bytes in order (saturated).
KERNEL void store_bytes16(__m256i words, uint8_t *p) {
    _mm_storeu_si128((__m128i *)p, _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1)));
}

/// (C − 128)·256 of 16 chroma samples.
KERNEL __m256i centred(const uint8_t *p) {
    __m256i c = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
    return _mm256_slli_epi16(_mm256_sub_epi16(c, _mm256_set1_epi16(128)), 8);
}

__attribute__((target("avx2")))
void reel_fixed_affine_avx2(const reel_fixed_affine *map, uint8_t *y, long ystride, uint8_t *u, long ustride,
                            uint8_t *v, long vstride, long columns, long height) {
    channel_map m[3];
    for (int c = 0; c < 3; c++) {
        m[c].slope = _mm256_set1_epi16(map->slope[c]);
        m[c].cb = _mm256_set1_epi16(map->cb[c]);
        m[c].cr = _mm256_set1_epi16(map->cr[c]);
        m[c].offset = _mm256_set1_epi16(map->offset[c]);
        m[c].negative = map->negative[c];
    }
    const __m256i zero = _mm256_setzero_si256();
    for (long cy = 0; cy < height / 2; cy++) {
        uint8_t *y0 = y + 2 * cy * ystride, *y1 = y0 + ystride, *pu = u + cy * ustride, *pv = v + cy * vstride;
        for (long x = 0; x < columns; x += 32) {
            const __m256i du = centred(pu + x / 2), dv = centred(pv + x / 2);
            const __m256i l0 = _mm256_loadu_si256((const __m256i *)(y0 + x)), l1 = _mm256_loadu_si256((const __m256i *)(y1 + x));
            // Luma·256: the byte in each lane's high half.
            const __m256i l[4] = {_mm256_unpacklo_epi8(zero, l0), _mm256_unpackhi_epi8(zero, l0),
                                  _mm256_unpacklo_epi8(zero, l1), _mm256_unpackhi_epi8(zero, l1)};
            __m256i r[4], g[4], b[4];
            channel(&m[0], l, du, dv, r);
            channel(&m[1], l, du, dv, g);
            channel(&m[2], l, du, dv, b);
            _mm256_storeu_si256((__m256i *)(y0 + x), _mm256_packus_epi16(luma(r[0], g[0], b[0]), luma(r[1], g[1], b[1])));
            _mm256_storeu_si256((__m256i *)(y1 + x), _mm256_packus_epi16(luma(r[2], g[2], b[2]), luma(r[3], g[3], b[3])));
            const __m256i mr = block_sums(r), mg = block_sums(g), mb = block_sums(b);
            store_bytes16(chroma(mr, mg, mb, -9676, -18996, 28672), pu + x / 2);
            store_bytes16(chroma(mr, mg, mb, 28672, -24009, -4663), pv + x / 2);
        }
    }
}
#else
void reel_fixed_affine_avx2(const reel_fixed_affine *map, uint8_t *y, long ystride, uint8_t *u, long ustride,
                            uint8_t *v, long vstride, long columns, long height) {
    (void)map; (void)y; (void)ystride; (void)u; (void)ustride; (void)v; (void)vstride; (void)columns; (void)height;
}
#endif
