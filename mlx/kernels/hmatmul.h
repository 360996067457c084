// 16-bit float weight kernels shared by the C files of package kernels.
#ifndef HARK_HMATMUL_H
#define HARK_HMATMUL_H

#include <stddef.h>
#include <stdint.h>

// Formats, numbered as the Go side's Half.
enum { HARK_BF16 = 1, HARK_F16 = 2 };

// hark_h2f widens n 16-bit floats of format kind into dst. force 1 takes
// the portable C loop (for tests).
void hark_h2f(const uint16_t* src, size_t n, int kind, float* dst, int force);

// out[i*ldo + j] = sum_p x[i*k + p] * W[j*k + p] for rows j in [j0, j1) of
// W [n, k] and all m rows of x (x @ Wᵀ). force 2 takes the best kernel
// without AVX-512 (for tests and comparisons).
void hark_hmm_t(const float* x, int m, int k, const uint16_t* w, int kind, int j0, int j1, float* out, int ldo,
                int force);

// out[i*ldo + c] = sum_p x[i*k + p] * W[p*n + c] for columns c in [c0, c1)
// of W [k, n] and all m rows of x (x @ W).
void hark_hmm_n(const float* x, int m, int k, int n, const uint16_t* w, int kind, int c0, int c1, float* out,
                int ldo, int force);

// Architecture kernels; each returns 0 when it cannot run here (the
// caller then uses the portable C loop).
int hark_h2f_simd(const uint16_t* src, size_t n, int kind, float* dst);
int hark_hmm_t_simd(const float* x, int m, int k, const uint16_t* w, int kind, int j0, int j1, float* out, int ldo);
// HARK_HMM_ROWS is the most rows of x for which hark_hmm_t sums each row
// exactly as it sums that row alone, on every kernel (Go reads it as
// kernels.HMatmulRowsMaxM): a row of a batched decode step gets what it
// gets alone.
#define HARK_HMM_ROWS 16

// hark_hmm_t_512 is hark_hmm_t on AVX-512 (hmatmul512_amd64.c); 0 when the
// CPU lacks it.
int hark_hmm_t_512(const float* x, int m, int k, const uint16_t* w, int kind, int j0, int j1, float* out, int ldo);
int hark_hmm_n_simd(const float* x, int m, int k, int n, const uint16_t* w, int kind, int c0, int c1, float* out,
                    int ldo);

// hark_h1 widens one value (the portable conversion, for edges).
static inline float hark_h1(uint16_t h, int kind) {
	union {
		uint32_t u;
		float f;
	} v;
	if (kind == HARK_BF16) {
		v.u = (uint32_t)h << 16;
		return v.f;
	}
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	if (exp == 0x1f) {
		v.u = sign | 0x7f800000u | man << 13;
	} else if (exp != 0) {
		v.u = sign | (exp + 112) << 23 | man << 13;
	} else if (man == 0) {
		v.u = sign;
	} else {
		uint32_t e = 113;
		while (!(man & 0x400)) man <<= 1, e--;
		v.u = sign | e << 23 | (man & 0x3ff) << 13;
	}
	return v.f;
}

#endif
