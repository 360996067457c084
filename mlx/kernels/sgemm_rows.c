//go:build cgo && (linux || darwin)

// Row-exact products for a few rows of x: out = alpha * x @ Wᵀ + beta * out
// with x [m, k] and W [n, k], each (i, j) one dot product summed in an
// order that depends on k alone, never on m or on the other rows. A row
// of a batched decode step then gets bit for bit what it gets alone.
// Each dot product keeps 32 lanes over k, adds the tail in order, and
// folds the lanes in a fixed tree; W's row stays in L1 while every row of
// x passes over it, so W is read from memory once per call.

#include <stddef.h>
#include "qmatmul.h"

#define SR_LANES 32

#define SR_INLINE __attribute__((always_inline)) static inline

SR_INLINE float sr_dot(const float* x, const float* w, int k) {
	float acc[SR_LANES] = {0};
	int p = 0;
	for (; p + SR_LANES <= k; p += SR_LANES)
		for (int l = 0; l < SR_LANES; l++) acc[l] += x[p + l] * w[p + l];
	float t = 0;
	for (; p < k; p++) t += x[p] * w[p];
	for (int s = SR_LANES / 2; s > 0; s /= 2)
		for (int l = 0; l < s; l++) acc[l] += acc[l + s];
	return acc[0] + t;
}

SR_INLINE void sr_rows(const float* x, int m, int k, int ldx, const float* w, int ldw, int j0, int j1, float alpha,
                       float beta, float* out, int ldo) {
	for (int j = j0; j < j1; j++) {
		const float* wr = w + (size_t)j * ldw;
		for (int i = 0; i < m; i++) {
			const float d = alpha * sr_dot(x + (size_t)i * ldx, wr, k);
			float* o = out + (size_t)i * ldo + j;
			*o = beta == 0 ? d : d + beta * *o;
		}
	}
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static void sr_rows_avx2(const float* x, int m, int k, int ldx, const float* w,
                                                               int ldw, int j0, int j1, float alpha, float beta,
                                                               float* out, int ldo) {
	sr_rows(x, m, k, ldx, w, ldw, j0, j1, alpha, beta, out, ldo);
}
#endif

// hark_sgemm_rows computes W rows [j0, j1) of out. Which kernel runs is
// fixed per machine, so a row's sums never depend on the batch.
void hark_sgemm_rows(const float* x, int m, int k, int ldx, const float* w, int ldw, int j0, int j1, float alpha,
                     float beta, float* out, int ldo) {
#if defined(__x86_64__)
	if (hark_cpu_features() & HARK_CPU_AVX2_FMA) {
		sr_rows_avx2(x, m, k, ldx, w, ldw, j0, j1, alpha, beta, out, ldo);
		return;
	}
#endif
	sr_rows(x, m, k, ldx, w, ldw, j0, j1, alpha, beta, out, ldo);
}
