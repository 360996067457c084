// HARK_CLONES builds a plain C loop also for AVX-512 and AVX2, the copy
// being picked at load time by the CPU (GCC function multiversioning on
// x86-64 Linux). The package compiles for the baseline ISA, where the
// vectoriser only has 4-wide SSE2 and no FMA.
#ifndef HARK_SIMD_CLONES_H
#define HARK_SIMD_CLONES_H
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define HARK_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HARK_CLONES
#endif
#endif
