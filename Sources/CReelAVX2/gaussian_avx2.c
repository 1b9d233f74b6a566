// The recursive Gaussian (ReelKernels' RecursiveGaussian.swift) for CPUs with AVX2. It must
// give exactly the bytes the Swift kernel gives (RecursiveGaussianTests compare them): every
// sample goes through the same IEEE operations in the same order; only the lane count (eight
// rows' columns in one register) and the order of independent work differ. Hence no fused
// multiply-add (the functions target "avx2" only, and contraction is off) and the same
// roundings (cvtps2dq, to nearest even, for whole rows of eight; + 0.5 and truncation at a
// row's last few samples, as the Swift kernel's scalar tail).
//
// Speed: each step of a recursion waits on the one before it (a multiply and an add), so one
// recursion alone leaves the core mostly idle. Each band's backward horizontal pass runs side
// by side with the next band's forward one, in blocks of eight columns.

#include "CReelAVX2.h"

long reel_gaussian_avx2_working(const reel_recursive_gaussian *g, long width, long height) {
    return 8 * width + (height + g->tail) * width + 16 * (width + g->tail);
}

#if defined(__x86_64__)
#include <immintrin.h>

#pragma clang fp contract(off)

#define KERNEL static inline __attribute__((always_inline, target("avx2")))

typedef struct {
    __m256 b, a1, a2, a3;
} coefficients;

typedef struct {
    uint8_t *plane;
    long stride, width, height, count;
    float bias;
} source;

/// b·x + a3·p3 + a2·p2 + a1·p1, added in that order.
KERNEL __m256 recur(__m256 x, __m256 p1, __m256 p2, __m256 p3, const coefficients *k) {
    __m256 v = _mm256_mul_ps(x, k->b);
    v = _mm256_add_ps(v, _mm256_mul_ps(p3, k->a3));
    v = _mm256_add_ps(v, _mm256_mul_ps(p2, k->a2));
    return _mm256_add_ps(v, _mm256_mul_ps(p1, k->a1));
}

/// Eight bytes at `p` as code value − bias.
KERNEL __m256 load_bytes(const uint8_t *p, __m256 bias) {
    __m256i words = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
    return _mm256_sub_ps(_mm256_cvtepi32_ps(words), bias);
}

/// Column `x` of the band's eight rows.
KERNEL __m256 column(uint8_t *const r[8], long x, float bias) {
    return _mm256_setr_ps((float)r[0][x] - bias, (float)r[1][x] - bias, (float)r[2][x] - bias, (float)r[3][x] - bias,
                          (float)r[4][x] - bias, (float)r[5][x] - bias, (float)r[6][x] - bias, (float)r[7][x] - bias);
}

/// The 8 × 8 block whose rows are v[0…7], transposed in place.
KERNEL void transpose8(__m256 v[8]) {
    __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
    __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
    __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]), t5 = _mm256_unpackhi_ps(v[4], v[5]);
    __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]), t7 = _mm256_unpackhi_ps(v[6], v[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)), u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)), u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)), u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)), u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    v[0] = _mm256_permute2f128_ps(u0, u4, 0x20); v[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    v[2] = _mm256_permute2f128_ps(u2, u6, 0x20); v[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    v[4] = _mm256_permute2f128_ps(u0, u4, 0x31); v[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    v[6] = _mm256_permute2f128_ps(u2, u6, 0x31); v[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

#define FORWARD(xv, dst)                                           \
    do {                                                           \
        __m256 v_ = recur((xv), w1, w2, w3, k);                    \
        w3 = w2; w2 = w1; w1 = v_;                                 \
        _mm256_storeu_ps((dst), v_);                               \
    } while (0)

#define BACKWARD(src, o)                                           \
    do {                                                           \
        (o) = recur(_mm256_loadu_ps(src), y1, y2, y3, k);          \
        y3 = y2; y2 = y1; y1 = (o);                                \
    } while (0)

/// The horizontal pass's forward half of the band at `top` (rows past the bottom repeat the
/// last one; none when `top` < 0) into the columns `next` (eight floats each), and its
/// backward half of the band whose forward half is in `current` (none when NULL) into the
/// eight rows of `out`, the two interleaved.
KERNEL void horizontal(const source *s, const coefficients *k, long top, float *next, const float *current, float *out) {
    const long w = s->width, h = s->height, count = s->count, whole = w & ~7L;
    const __m256 bias = _mm256_set1_ps(s->bias);
    uint8_t *r[8];
    __m256 w1 = _mm256_setzero_ps(), w2 = w1, w3 = w1;
    if (top >= 0) {
        for (int i = 0; i < 8; i++) r[i] = s->plane + (top + i < h ? top + i : h - 1) * s->stride;
        w1 = column(r, 0, s->bias); w2 = w1; w3 = w1;
    }
    long f = 0;
    if (current) {
        __m256 y1 = _mm256_loadu_ps(current + 8 * (count - 1)), y2 = y1, y3 = y1, o;
        long x = count - 1;
        for (; x >= w; x--) BACKWARD(current + 8 * x, o);
        for (; x >= whole; x--) {
            BACKWARD(current + 8 * x, o);
            float lanes[8];
            _mm256_storeu_ps(lanes, o);
            for (int i = 0; i < 8; i++) out[i * w + x] = lanes[i];
        }
        for (; x >= 0; x -= 8) {
            if (top >= 0) {
                __m256 c[8];
                for (int i = 0; i < 8; i++) c[i] = load_bytes(r[i] + f, bias);
                transpose8(c);
                for (int j = 0; j < 8; j++) FORWARD(c[j], next + 8 * (f + j));
                f += 8;
            }
            __m256 b[8];
            for (int j = 7; j >= 0; j--) BACKWARD(current + 8 * (x - 7 + j), b[j]);
            transpose8(b);
            for (int i = 0; i < 8; i++) _mm256_storeu_ps(out + i * w + x - 7, b[i]);
        }
    }
    if (top < 0) return;
    for (; f < whole; f += 8) {
        __m256 c[8];
        for (int i = 0; i < 8; i++) c[i] = load_bytes(r[i] + f, bias);
        transpose8(c);
        for (int j = 0; j < 8; j++) FORWARD(c[j], next + 8 * (f + j));
    }
    for (; f < w; f++) FORWARD(column(r, f, s->bias), next + 8 * f);
    const __m256 last = column(r, w - 1, s->bias);
    for (; f < count; f++) FORWARD(last, next + 8 * f);
}

/// out[i] = b·x[i] + a3·p3[i] + a2·p2[i] + a1·p1[i] for i < n (`out` may be `x`).
KERNEL void step(float *out, const float *x, const float *p1, const float *p2, const float *p3, long n,
                 const coefficients *k, const reel_recursive_gaussian *g) {
    long i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, recur(_mm256_loadu_ps(x + i), _mm256_loadu_ps(p1 + i), _mm256_loadu_ps(p2 + i),
                                        _mm256_loadu_ps(p3 + i), k));
    for (; i < n; i++) out[i] = x[i] * g->b + p3[i] * g->a3 + p2[i] * g->a2 + p1[i] * g->a1;
}

/// Row `y` of the plane from the blurred samples, through the unsharp mask when `original`.
KERNEL void write_row(const source *s, long y, const float *blurred, float amount, float *original) {
    const long w = s->width;
    const float bias = s->bias;
    const __m256 biasv = _mm256_set1_ps(bias), zero = _mm256_setzero_ps(), top = _mm256_set1_ps(255);
    uint8_t *dst = s->plane + y * s->stride;
    const float *src = blurred;
    long i = 0;
    if (original) {
        for (; i + 8 <= w; i += 8) _mm256_storeu_ps(original + i, load_bytes(dst + i, biasv));
        for (; i < w; i++) original[i] = (float)dst[i] - bias;
        for (i = 0; i < w; i++) original[i] = original[i] + amount * (original[i] - blurred[i]);
        src = original;
    }
    for (i = 0; i + 8 <= w; i += 8) {
        __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(_mm256_loadu_ps(src + i), biasv), zero), top);
        __m256i n = _mm256_cvtps_epi32(v);
        __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(n), _mm256_extracti128_si256(n, 1));
        _mm_storel_epi64((__m128i *)(dst + i), _mm_packus_epi16(words, words));
    }
    for (; i < w; i++) {
        float t = src[i] + bias;
        t = t < 0 ? 0 : t;
        t = t > 255 ? 255 : t;
        dst[i] = (uint8_t)(long)(t + 0.5f);
    }
}

__attribute__((target("avx2")))
void reel_gaussian_avx2(const reel_recursive_gaussian *g, uint8_t *plane, long stride, long width, long height, float bias,
                        float amount, float *original, float *working) {
    const long w = width, h = height, total = h + g->tail;
    const source s = {plane, stride, w, h, w + g->tail, bias};
    const coefficients k = {_mm256_set1_ps(g->b), _mm256_set1_ps(g->a1), _mm256_set1_ps(g->a2), _mm256_set1_ps(g->a3)};
    float *ring = working, *rows = working + 8 * w;
    float *current = rows + total * w, *next = current + 8 * s.count;
    const float *w1 = ring, *w2 = ring, *w3 = ring;
    horizontal(&s, &k, 0, current, 0, ring);
    for (long top = 0; top < h; top += 8) {
        horizontal(&s, &k, top + 8 < h ? top + 8 : -1, next, current, ring);
        float *t = current; current = next; next = t;
        for (long j = 0; j < 8 && top + j < h; j++) {
            const float *x = ring + j * w;
            float *out = rows + (top + j) * w;
            if (top + j == 0) { w1 = x; w2 = x; w3 = x; }
            step(out, x, w1, w2, w3, w, &k, g);
            w3 = w2; w2 = w1; w1 = out;
        }
    }
    const float *last = ring + ((h - 1) % 8) * w;
    for (long y = h; y < total; y++) {
        float *out = rows + y * w;
        step(out, last, w1, w2, w3, w, &k, g);
        w3 = w2; w2 = w1; w1 = out;
    }
    const float *y1 = rows + (total - 1) * w, *y2 = y1, *y3 = y1;
    for (long y = total - 1; y >= 0; y--) {
        float *out = y < h ? ring + (y % 4) * w : rows + y * w;
        step(out, rows + y * w, y1, y2, y3, w, &k, g);
        if (y < h) write_row(&s, y, out, amount, original);
        y3 = y2; y2 = y1; y1 = out;
    }
}
#else
void reel_gaussian_avx2(const reel_recursive_gaussian *g, uint8_t *plane, long stride, long width, long height, float bias,
                        float amount, float *original, float *working) {
    (void)g; (void)plane; (void)stride; (void)width; (void)height; (void)bias; (void)amount; (void)original; (void)working;
}
#endif
