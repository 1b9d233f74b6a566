// FixedAffine and FixedBlend for CPUs with AVX-512BW: 64 pixels of two rows (32 chroma blocks)
// a step. The bodies are fixed_affine_kernel.h's and fixed_blend_kernel.h's.

#include "CReelAVX2.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET "avx512bw,avx512f,avx2"
#define KERNEL static inline __attribute__((always_inline, target(TARGET)))
#define FUNCTION reel_fixed_affine_avx512
#define BLEND_FUNCTION reel_fixed_blend_avx512
#define STEP 64
#define V __m512i
#define VF __m512
#define OP(name) _mm512_##name
#define ZERO() _mm512_setzero_si512()
#define LOAD(p) _mm512_loadu_si512(p)
#define STORE(p, v) _mm512_storeu_si512((p), (v))
#define CHROMA_LOAD(p) _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(p)))
#define SELECT_GT(a, b, yes, no) _mm512_mask_blend_epi16(_mm512_cmpgt_epi16_mask((a), (b)), (no), (yes))
#define SELECT_EQ(a, b, yes, no) _mm512_mask_blend_epi16(_mm512_cmpeq_epi16_mask((a), (b)), (no), (yes))

/// 32 words as 32 bytes in order, saturated as `packuswb` (negative to 0, above 255 to 255):
/// a max with 0, then an unsigned saturating narrow.
KERNEL void store_bytes32(__m512i words, uint8_t *p) {
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtusepi16_epi8(_mm512_max_epi16(words, _mm512_setzero_si512())));
}
#define CHROMA_STORE(words, p) store_bytes32((words), (p))

/// table[lane] for each of 32 lanes (0…8192): two 16-lane gathers of 32 bits (the entry and
/// the next), truncated to 16 bits and put back in order.
KERNEL __m512i gather_curve32(const int16_t *table, __m512i v) {
    __m512i a = _mm512_i32gather_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)), (const void *)table, 2);
    __m512i b = _mm512_i32gather_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1)), (const void *)table, 2);
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(a)), _mm512_cvtepi32_epi16(b), 1);
}
#define CURVE_GATHER(table, v) gather_curve32((table), (v))

#include "fixed_affine_kernel.h"
#include "fixed_blend_kernel.h"
#else
void reel_fixed_affine_avx512(const reel_fixed_affine *map, const int16_t *curve, uint8_t *y, long ystride, uint8_t *u, long ustride,
                              uint8_t *v, long vstride, long columns, long height) {
    (void)map; (void)curve; (void)y; (void)ystride; (void)u; (void)ustride; (void)v; (void)vstride; (void)columns; (void)height;
}

void reel_fixed_blend_avx512(int mode, const reel_fixed_affine *map, int16_t opacity, const reel_planes *layer, const reel_planes *frame,
                             long columns, long height) {
    (void)mode; (void)map; (void)opacity; (void)layer; (void)frame; (void)columns; (void)height;
}
#endif
