// fixed_affine_avx2.c for CPUs with AVX-512BW: 64 pixels of two rows (32 chroma blocks) a
// step, the same integer operations lane by lane, so the same bytes. AVX-512's unpacks and
// packs also work within each 128-bit quarter, so the pixel and block layout is that file's,
// four times over.

#include "CReelAVX2.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define KERNEL static inline __attribute__((always_inline, target("avx512bw,avx512f,avx2")))

typedef struct {
    __m512i slope, cb, cr, offset;
    int negative;
} channel_map;

KERNEL __m512i clamp(__m512i v) {
    return _mm512_min_epi16(_mm512_max_epi16(v, _mm512_setzero_si512()), _mm512_set1_epi16(8192));
}

KERNEL void channel(const channel_map *m, const __m512i y[4], __m512i du, __m512i dv, __m512i out[4]) {
    __m512i w = _mm512_adds_epi16(_mm512_adds_epi16(_mm512_mulhi_epi16(du, m->cb), _mm512_mulhi_epi16(dv, m->cr)), m->offset);
    __m512i wl = _mm512_unpacklo_epi16(w, w), wh = _mm512_unpackhi_epi16(w, w);
    for (int i = 0; i < 4; i++) {
        __m512i t = _mm512_mulhi_epu16(y[i], m->slope), c = (i & 1) ? wh : wl;
        out[i] = clamp(m->negative ? _mm512_subs_epi16(c, t) : _mm512_adds_epi16(c, t));
    }
}

KERNEL __m512i luma(__m512i r, __m512i g, __m512i b) {
    __m512i s = _mm512_add_epi16(_mm512_mulhi_epu16(_mm512_slli_epi16(r, 2), _mm512_set1_epi16(16763)), _mm512_set1_epi16(16 * 128 + 64 + 1));
    s = _mm512_add_epi16(s, _mm512_mulhi_epu16(_mm512_slli_epi16(g, 2), _mm512_set1_epi16((short)32910)));
    s = _mm512_add_epi16(s, _mm512_mulhi_epu16(_mm512_slli_epi16(b, 2), _mm512_set1_epi16(6391)));
    return _mm512_srli_epi16(s, 7);
}

KERNEL __m512i block_sums(const __m512i c[4]) {
    const __m512i ones = _mm512_set1_epi16(1);
    return _mm512_packs_epi32(_mm512_madd_epi16(_mm512_add_epi16(c[0], c[2]), ones),
                              _mm512_madd_epi16(_mm512_add_epi16(c[1], c[3]), ones));
}

KERNEL __m512i chroma(__m512i mr, __m512i mg, __m512i mb, short k0, short k1, short k2) {
    __m512i s = _mm512_add_epi16(_mm512_mulhi_epi16(mr, _mm512_set1_epi16(k0)), _mm512_set1_epi16(128 * 128 + 64 + 1));
    s = _mm512_add_epi16(s, _mm512_mulhi_epi16(mg, _mm512_set1_epi16(k1)));
    s = _mm512_add_epi16(s, _mm512_mulhi_epi16(mb, _mm512_set1_epi16(k2)));
    return _mm512_srai_epi16(s, 7);
}

/// 32 words as 32 bytes in order (saturated as `packuswb`).
KERNEL void store_bytes32(__m512i words, uint8_t *p) {
    __m256i lo = _mm512_castsi512_si256(words), hi = _mm512_extracti64x4_epi64(words, 1);
    _mm_storeu_si128((__m128i *)p, _mm_packus_epi16(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1)));
    _mm_storeu_si128((__m128i *)(p + 16), _mm_packus_epi16(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1)));
}

KERNEL __m512i centred(const uint8_t *p) {
    __m512i c = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_slli_epi16(_mm512_sub_epi16(c, _mm512_set1_epi16(128)), 8);
}

__attribute__((target("avx512bw,avx512f,avx2")))
void reel_fixed_affine_avx512(const reel_fixed_affine *map, uint8_t *y, long ystride, uint8_t *u, long ustride,
                              uint8_t *v, long vstride, long columns, long height) {
    channel_map m[3];
    for (int c = 0; c < 3; c++) {
        m[c].slope = _mm512_set1_epi16(map->slope[c]);
        m[c].cb = _mm512_set1_epi16(map->cb[c]);
        m[c].cr = _mm512_set1_epi16(map->cr[c]);
        m[c].offset = _mm512_set1_epi16(map->offset[c]);
        m[c].negative = map->negative[c];
    }
    const __m512i zero = _mm512_setzero_si512();
    for (long cy = 0; cy < height / 2; cy++) {
        uint8_t *y0 = y + 2 * cy * ystride, *y1 = y0 + ystride, *pu = u + cy * ustride, *pv = v + cy * vstride;
        for (long x = 0; x < columns; x += 64) {
            const __m512i du = centred(pu + x / 2), dv = centred(pv + x / 2);
            const __m512i l0 = _mm512_loadu_si512(y0 + x), l1 = _mm512_loadu_si512(y1 + x);
            const __m512i l[4] = {_mm512_unpacklo_epi8(zero, l0), _mm512_unpackhi_epi8(zero, l0),
                                  _mm512_unpacklo_epi8(zero, l1), _mm512_unpackhi_epi8(zero, l1)};
            __m512i r[4], g[4], b[4];
            channel(&m[0], l, du, dv, r);
            channel(&m[1], l, du, dv, g);
            channel(&m[2], l, du, dv, b);
            _mm512_storeu_si512(y0 + x, _mm512_packus_epi16(luma(r[0], g[0], b[0]), luma(r[1], g[1], b[1])));
            _mm512_storeu_si512(y1 + x, _mm512_packus_epi16(luma(r[2], g[2], b[2]), luma(r[3], g[3], b[3])));
            const __m512i mr = block_sums(r), mg = block_sums(g), mb = block_sums(b);
            store_bytes32(chroma(mr, mg, mb, -9676, -18996, 28672), pu + x / 2);
            store_bytes32(chroma(mr, mg, mb, 28672, -24009, -4663), pv + x / 2);
        }
    }
}
#else
void reel_fixed_affine_avx512(const reel_fixed_affine *map, uint8_t *y, long ystride, uint8_t *u, long ustride,
                              uint8_t *v, long vstride, long columns, long height) {
    (void)map; (void)y; (void)ystride; (void)u; (void)ustride; (void)v; (void)vstride; (void)columns; (void)height;
}
#endif
