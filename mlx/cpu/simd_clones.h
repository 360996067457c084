// HARK_CLONES builds a plain C loop also for the x86-64-v4 (AVX-512) and
// v3 (AVX2 with FMA) levels, the copy being picked at load time by the CPU
// (GCC function multiversioning on x86-64 Linux). The package compiles for
// the baseline ISA, where the vectoriser only has 4-wide SSE2 and no FMA.
// The levels, not bare "avx512f"/"avx2", because those do not enable FMA:
// every multiply-add was a multiply and an add. Helpers the clones call
// must be always_inline, or all clones share one baseline copy of them.
#ifndef HARK_SIMD_CLONES_H
#define HARK_SIMD_CLONES_H
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define HARK_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#elif defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
// GCC before 12 has no ISA levels as clone targets.
#define HARK_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HARK_CLONES
#endif
#endif
