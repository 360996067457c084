//go:build cgo

// Portable C kernels for 16-bit float weights: correct for both formats on
// every architecture, and the fallback of the SIMD kernels.

#include "hmatmul.h"

void hark_h2f(const uint16_t* src, size_t n, int kind, float* dst, int force) {
	if (force != 1 && hark_h2f_simd(src, n, kind, dst)) return;
	for (size_t i = 0; i < n; i++) dst[i] = hark_h1(src[i], kind);
}

void hark_hmm_t(const float* x, int m, int k, const uint16_t* w, int kind, int j0, int j1, float* out, int ldo,
                int force) {
#if defined(__x86_64__)
	if (force == 0 && hark_hmm_t_512(x, m, k, w, kind, j0, j1, out, ldo)) return;
#endif
	if (force != 1 && hark_hmm_t_simd(x, m, k, w, kind, j0, j1, out, ldo)) return;
	float row[256];
	for (int j = j0; j < j1; j++) {
		const uint16_t* wr = w + (size_t)j * k;
		for (int i = 0; i < m; i++) out[(size_t)i * ldo + j] = 0;
		// Widen the row a block at a time (the block stays in L1) and
		// dot it with every row of x.
		for (int p0 = 0; p0 < k; p0 += 256) {
			int len = k - p0 < 256 ? k - p0 : 256;
			for (int p = 0; p < len; p++) row[p] = hark_h1(wr[p0 + p], kind);
			for (int i = 0; i < m; i++) {
				const float* xi = x + (size_t)i * k + p0;
				float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
				int p = 0;
				for (; p + 4 <= len; p += 4) {
					s0 += xi[p] * row[p];
					s1 += xi[p + 1] * row[p + 1];
					s2 += xi[p + 2] * row[p + 2];
					s3 += xi[p + 3] * row[p + 3];
				}
				for (; p < len; p++) s0 += xi[p] * row[p];
				out[(size_t)i * ldo + j] += (s0 + s1) + (s2 + s3);
			}
		}
	}
}

void hark_hmm_n(const float* x, int m, int k, int n, const uint16_t* w, int kind, int c0, int c1, float* out,
                int ldo, int force) {
	if (force != 1 && hark_hmm_n_simd(x, m, k, n, w, kind, c0, c1, out, ldo)) return;
	float seg[256];
	for (int cb = c0; cb < c1; cb += 256) {
		int len = c1 - cb < 256 ? c1 - cb : 256;
		for (int i = 0; i < m; i++)
			for (int c = 0; c < len; c++) out[(size_t)i * ldo + cb + c] = 0;
		for (int p = 0; p < k; p++) {
			const uint16_t* wr = w + (size_t)p * n + cb;
			for (int c = 0; c < len; c++) seg[c] = hark_h1(wr[c], kind);
			for (int i = 0; i < m; i++) {
				float a = x[(size_t)i * k + p], *o = out + (size_t)i * ldo + cb;
				for (int c = 0; c < len; c++) o[c] += a * seg[c];
			}
		}
	}
}

#if !defined(__x86_64__) && !defined(__aarch64__)
int hark_h2f_simd(const uint16_t* src, size_t n, int kind, float* dst) { return 0; }
int hark_hmm_t_simd(const float* x, int m, int k, const uint16_t* w, int kind, int j0, int j1, float* out, int ldo) {
	return 0;
}
int hark_hmm_n_simd(const float* x, int m, int k, int n, const uint16_t* w, int kind, int c0, int c1, float* out,
                    int ldo) {
	return 0;
}
#endif
