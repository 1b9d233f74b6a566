#ifndef CREELAVX2_H
#define CREELAVX2_H

#include <stdint.h>

/// 1 when this CPU and the operating system support AVX2 (the CPU reports AVX and AVX2, and
/// the OS saves the 256-bit registers: OSXSAVE, and XCR0's SSE and AVX state bits), else 0.
/// Always 0 on other architectures.
int reel_cpu_has_avx2(void);

/// 1 when this CPU and the operating system support AVX-512F and AVX-512BW (the CPU reports
/// them, and XCR0 has the opmask and 512-bit register states as well as AVX's), else 0.
int reel_cpu_has_avx512bw(void);

/// The recursive Gaussian's coefficients (`RecursiveGaussian`): w[n] = b·x[n] + a1·w[n−1] +
/// a2·w[n−2] + a3·w[n−3], forwards then backwards, running `tail` samples past each end.
typedef struct {
    float b, a1, a2, a3;
    long tail;
} reel_recursive_gaussian;

/// `RecursiveGaussian.run` over an 8-bit plane (`height` rows of `width` bytes, `stride` apart,
/// read as code value − `bias`), for CPUs with AVX2: the same arithmetic in the same order for
/// every sample, so the same bytes, eight lanes a register. When `original` (`width` floats)
/// is not NULL, each output row is the unsharp mask x + amount·(x − blurred), as
/// `SharpenedRows` writes it. `working` holds `reel_gaussian_avx2_working(…)` floats.
/// Only call it when `reel_cpu_has_avx2()`; it does nothing on other architectures.
void reel_gaussian_avx2(const reel_recursive_gaussian *g, uint8_t *plane, long stride, long width, long height, float bias,
                        float amount, float *original, float *working);

/// The floats of working memory `reel_gaussian_avx2` needs.
long reel_gaussian_avx2_working(const reel_recursive_gaussian *g, long width, long height);

#endif

#ifndef CREELAVX2_AFFINE_H
#define CREELAVX2_AFFINE_H
/// A clamped affine map of RGB in 16-bit fixed point (ReelKernels' `FixedAffine`): per channel
/// (r, g, b), the slope on luma·256 (for an unsigned high multiply) and whether it is
/// negative, the Cb and Cr weights (for a signed high multiply of (C − 128)·256), and the
/// offset, all as that type holds them; and the weights that write the result back in the
/// picture's matrix (`Q13Weights`: luma's for an unsigned high multiply, Cb's and Cr's for a
/// signed one, of R, G and B).
typedef struct {
    int16_t slope[3], cb[3], cr[3], offset[3];
    uint8_t negative[3];
    int16_t store_luma[3], store_cb[3], store_cr[3];
} reel_fixed_affine;

/// `FixedAffine.apply` over the first `columns` pixels (a multiple of 32) of every row pair of
/// a 4:2:0 picture (even `height`), 32 pixels a step, for CPUs with AVX2: the same integer
/// operations lane by lane, so the same bytes. `curve`, when not NULL, is the map's gamma
/// (`FixedAffine.Curve`: 8193 entries for 0…8192, and one more that is never used, since the
/// entries are read 32 bits at a time). Only call it when `reel_cpu_has_avx2()`; it does nothing
/// on other architectures.
void reel_fixed_affine_avx2(const reel_fixed_affine *map, const int16_t *curve, uint8_t *y, long ystride, uint8_t *u, long ustride,
                            uint8_t *v, long vstride, long columns, long height);

/// The same for CPUs with AVX-512BW, 64 pixels a step (`columns` a multiple of 64).
void reel_fixed_affine_avx512(const reel_fixed_affine *map, const int16_t *curve, uint8_t *y, long ystride, uint8_t *u,
                              long ustride, uint8_t *v, long vstride, long columns, long height);

/// The planes of a 4:2:0 picture: luma, Cb, Cr and (NULL when there is none) alpha, each row
/// `…stride` bytes after the one before.
typedef struct {
    uint8_t *y, *u, *v, *a;
    long ystride, ustride, vstride, astride;
} reel_planes;

/// The blend modes of `reel_fixed_blend_avx2` (ReelCore's `BlendMode`).
enum {
    REEL_BLEND_NORMAL = 0, REEL_BLEND_MULTIPLY, REEL_BLEND_SCREEN, REEL_BLEND_OVERLAY, REEL_BLEND_DARKEN,
    REEL_BLEND_LIGHTEN, REEL_BLEND_COLOR_DODGE, REEL_BLEND_COLOR_BURN, REEL_BLEND_HARD_LIGHT, REEL_BLEND_SOFT_LIGHT,
    REEL_BLEND_DIFFERENCE, REEL_BLEND_EXCLUSION, REEL_BLEND_ADD
};

/// `FixedBlend.blend` over the first `columns` pixels (a multiple of 32) of every row pair
/// (even `height`): `layer` (its alpha, or opaque) composited onto `frame` with `mode` at
/// `opacity` (Q15), both pictures read through `map` (the identity), for CPUs with AVX2: the
/// same operations lane by lane, so the same bytes. Only call it when `reel_cpu_has_avx2()`;
/// it does nothing on other architectures.
void reel_fixed_blend_avx2(int mode, const reel_fixed_affine *map, int16_t opacity, const reel_planes *layer, const reel_planes *frame,
                           long columns, long height);

/// The same for CPUs with AVX-512BW, 64 pixels a step (`columns` a multiple of 64).
void reel_fixed_blend_avx512(int mode, const reel_fixed_affine *map, int16_t opacity, const reel_planes *layer, const reel_planes *frame,
                             long columns, long height);
#endif
