#ifndef CREELAVX2_H
#define CREELAVX2_H

#include <stdint.h>

/// 1 when this CPU and the operating system support AVX2 (the CPU reports AVX and AVX2, and
/// the OS saves the 256-bit registers: OSXSAVE, and XCR0's SSE and AVX state bits), else 0.
/// Always 0 on other architectures.
int reel_cpu_has_avx2(void);

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
