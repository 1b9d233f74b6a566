#include "CReelAVX2.h"

#if defined(__x86_64__)
#include <cpuid.h>

/// The register states the OS saves (XCR0), or 0 when the CPU has no AVX or the OS no XSAVE.
static unsigned saved_states(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const unsigned osxsave = 1u << 27, avx = 1u << 28;
    if ((c & (osxsave | avx)) != (osxsave | avx)) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return lo;
}

/// cpuid leaf 7's EBX: the AVX2 and AVX-512 feature bits.
static unsigned extended_features(void) {
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) ? b : 0;
}

int reel_cpu_has_avx2(void) {
    /* XCR0 bits 1 and 2: SSE and AVX state; leaf 7 EBX bit 5: AVX2. */
    return (saved_states() & 0x6) == 0x6 && (extended_features() >> 5) & 1;
}

int reel_cpu_has_avx512bw(void) {
    /* XCR0 bits 5–7: opmask, upper halves of ZMM0–15, ZMM16–31; EBX bits 16 (F) and 30 (BW). */
    const unsigned f = 1u << 16, bw = 1u << 30;
    return (saved_states() & 0xE6) == 0xE6 && (extended_features() & (f | bw)) == (f | bw) && reel_cpu_has_avx2();
}
#else
int reel_cpu_has_avx2(void) { return 0; }
int reel_cpu_has_avx512bw(void) { return 0; }
#endif
