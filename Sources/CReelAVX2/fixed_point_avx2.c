// FixedAffine and FixedBlend for CPUs with AVX2: 32 pixels of two rows (16 chroma blocks) a
// step where the Swift kernels do 16. The bodies are fixed_affine_kernel.h's and
// fixed_blend_kernel.h's.

#include "CReelAVX2.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET "avx2"
#define KERNEL static inline __attribute__((always_inline, target(TARGET)))
#define FUNCTION reel_fixed_affine_avx2
#define BLEND_FUNCTION reel_fixed_blend_avx2
#define STEP 32
#define V __m256i
#define VF __m256
#define OP(name) _mm256_##name
#define ZERO() _mm256_setzero_si256()
#define LOAD(p) _mm256_loadu_si256((const __m256i *)(p))
#define STORE(p, v) _mm256_storeu_si256((__m256i *)(p), (v))
#define CHROMA_LOAD(p) _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(p)))
#define SELECT_GT(a, b, yes, no) _mm256_blendv_epi8((no), (yes), _mm256_cmpgt_epi16((a), (b)))
#define SELECT_EQ(a, b, yes, no) _mm256_blendv_epi8((no), (yes), _mm256_cmpeq_epi16((a), (b)))

/// 16 words as 16 bytes in order.
KERNEL void store_bytes16(__m256i words, uint8_t *p) {
    _mm_storeu_si128((__m128i *)p, _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1)));
}
#define CHROMA_STORE(words, p) store_bytes16((words), (p))

/// table[lane] for each of 16 lanes (0…8192): two 8-lane gathers of 32 bits (the entry and the
/// next, which the mask drops), packed back in order.
KERNEL __m256i gather_curve16(const int16_t *table, __m256i v) {
    const __m256i low = _mm256_set1_epi32(0xffff);
    __m256i a = _mm256_i32gather_epi32((const int *)table, _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v)), 2);
    __m256i b = _mm256_i32gather_epi32((const int *)table, _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1)), 2);
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(_mm256_and_si256(a, low), _mm256_and_si256(b, low)), 0xd8);
}
#define CURVE_GATHER(table, v) gather_curve16((table), (v))

#include "fixed_affine_kernel.h"
#include "fixed_blend_kernel.h"
#else
void reel_fixed_affine_avx2(const reel_fixed_affine *map, const int16_t *curve, uint8_t *y, long ystride, uint8_t *u, long ustride,
                            uint8_t *v, long vstride, long columns, long height) {
    (void)map; (void)curve; (void)y; (void)ystride; (void)u; (void)ustride; (void)v; (void)vstride; (void)columns; (void)height;
}

void reel_fixed_blend_avx2(int mode, const reel_fixed_affine *map, int16_t opacity, const reel_planes *layer, const reel_planes *frame,
                           long columns, long height) {
    (void)mode; (void)map; (void)opacity; (void)layer; (void)frame; (void)columns; (void)height;
}
#endif
