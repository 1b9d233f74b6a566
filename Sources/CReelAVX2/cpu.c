#include "CReelAVX2.h"

#if defined(__x86_64__)
#include <cpuid.h>

int reel_cpu_has_avx2(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const unsigned osxsave = 1u << 27, avx = 1u << 28;
    if ((c & (osxsave | avx)) != (osxsave | avx)) return 0;
    unsigned lo, hi;
    /* xgetbv(0): which register states the OS saves; bits 1 (SSE) and 2 (AVX). */
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b >> 5) & 1;
}
#else
int reel_cpu_has_avx2(void) { return 0; }
#endif
