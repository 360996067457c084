//go:build cgo

// AVX2/FMA + F16C kernels for 16-bit float weights on amd64. bf16 widens
// to float32 with a 16-bit shift, f16 with vcvtph2ps; the products and sums
// are float32 FMAs. Like qmatmul_amd64.c, the file is compiled for the
// baseline ISA and only the target-attributed functions use the wider
// instructions, after hark_cpu_features has seen them.

#include <immintrin.h>
#include <string.h>
#include "hmatmul.h"
#include "qmatmul.h"

#define HF_INLINE __attribute__((target("avx2,fma,f16c"), always_inline)) static inline
#define HF __attribute__((target("avx2,fma,f16c")))

// HARK_H_PF is how far ahead (bytes) the one-row kernel asks for the
// weights it will read; 0 turns it off.
#ifndef HARK_H_PF
#define HARK_H_PF 1024
#endif

static int hf_ok(void) {
	int f = hark_cpu_features();
	return (f & HARK_CPU_AVX2_FMA) && (f & HARK_CPU_F16C);
}

// ld8 widens 8 values at p; kind is a constant after inlining.
HF_INLINE __m256 ld8(const uint16_t* p, int kind) {
	__m128i v = _mm_loadu_si128((const __m128i*)p);
	if (kind == HARK_BF16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
	return _mm256_cvtph_ps(v);
}

HF_INLINE float hsum8(__m256 v) {
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

// rows computes NI (1 or 2) rows of x against one row of W, widening each
// vector of W once for both. Every row gets four accumulators, which hide
// the FMA latency one row alone would otherwise expose, and the same
// sequence of operations whatever NI is: a row's result does not depend
// on the rows beside it.
HF_INLINE void rows(const float* x, int k, const uint16_t* wr, int kind, int NI, float* out, size_t ldo) {
	__m256 a0[2], a1[2], a2[2], a3[2];
	for (int ii = 0; ii < NI; ii++) a0[ii] = a1[ii] = a2[ii] = a3[ii] = _mm256_setzero_ps();
	int p = 0;
	for (; p + 32 <= k; p += 32) {
#if HARK_H_PF
		_mm_prefetch((const char*)(wr + p) + HARK_H_PF, _MM_HINT_T0);
#endif
		const __m256 w0 = ld8(wr + p, kind), w1 = ld8(wr + p + 8, kind), w2 = ld8(wr + p + 16, kind),
		             w3 = ld8(wr + p + 24, kind);
		for (int ii = 0; ii < NI; ii++) {
			const float* xi = x + (size_t)ii * k + p;
			a0[ii] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xi), a0[ii]);
			a1[ii] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xi + 8), a1[ii]);
			a2[ii] = _mm256_fmadd_ps(w2, _mm256_loadu_ps(xi + 16), a2[ii]);
			a3[ii] = _mm256_fmadd_ps(w3, _mm256_loadu_ps(xi + 24), a3[ii]);
		}
	}
	for (; p + 8 <= k; p += 8) {
		const __m256 w0 = ld8(wr + p, kind);
		for (int ii = 0; ii < NI; ii++) a0[ii] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + (size_t)ii * k + p), a0[ii]);
	}
	if (p < k) {
		// Zero-padded copies: the padding multiplies 0 by 0.
		uint16_t wt[8] = {0};
		memcpy(wt, wr + p, (size_t)(k - p) * sizeof(uint16_t));
		const __m256 w0 = ld8(wt, kind);
		for (int ii = 0; ii < NI; ii++) {
			float xt[8] = {0};
			memcpy(xt, x + (size_t)ii * k + p, (size_t)(k - p) * sizeof(float));
			a1[ii] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xt), a1[ii]);
		}
	}
	for (int ii = 0; ii < NI; ii++)
		out[(size_t)ii * ldo] = hsum8(_mm256_add_ps(_mm256_add_ps(a0[ii], a1[ii]), _mm256_add_ps(a2[ii], a3[ii])));
}

// rows4 computes NI (2..4) rows of x against one row of W, widening each
// vector of W once for all of them: batches past HARK_HMM_ROWS (prefill
// chunks), where a row need not sum as it does alone.
HF_INLINE void rows4(const float* x, int k, const uint16_t* wr, int kind, int NI, float* out, size_t ldo) {
	__m256 a0[4], a1[4];
	for (int ii = 0; ii < NI; ii++) a0[ii] = a1[ii] = _mm256_setzero_ps();
	int p = 0;
	for (; p + 16 <= k; p += 16) {
		__m256 w0 = ld8(wr + p, kind), w1 = ld8(wr + p + 8, kind);
		for (int ii = 0; ii < NI; ii++) {
			a0[ii] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + (size_t)ii * k + p), a0[ii]);
			a1[ii] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + (size_t)ii * k + p + 8), a1[ii]);
		}
	}
	if (p < k) {
		uint16_t wt[16] = {0};
		memcpy(wt, wr + p, (size_t)(k - p) * sizeof(uint16_t));
		__m256 w0 = ld8(wt, kind), w1 = ld8(wt + 8, kind);
		for (int ii = 0; ii < NI; ii++) {
			float xt[16] = {0};
			memcpy(xt, x + (size_t)ii * k + p, (size_t)(k - p) * sizeof(float));
			a0[ii] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xt), a0[ii]);
			a1[ii] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xt + 8), a1[ii]);
		}
	}
	for (int ii = 0; ii < NI; ii++) out[(size_t)ii * ldo] = hsum8(_mm256_add_ps(a0[ii], a1[ii]));
}

HF_INLINE void mm_t(const float* x, int m, int k, const uint16_t* w, int kind, int j0, int j1, float* out, int ldo) {
	for (int j = j0; j < j1; j++) {
		const uint16_t* wr = w + (size_t)j * k;
		if (m > HARK_HMM_ROWS) {
			// Rows of x four at a time; W's row stays in L1 between blocks.
			for (int i0 = 0; i0 < m; i0 += 4) {
				const float* xi = x + (size_t)i0 * k;
				float* o = out + (size_t)i0 * ldo + j;
				switch (m - i0) {
				case 1: rows(xi, k, wr, kind, 1, o, ldo); break;
				case 2: rows4(xi, k, wr, kind, 2, o, ldo); break;
				case 3: rows4(xi, k, wr, kind, 3, o, ldo); break;
				default: rows4(xi, k, wr, kind, 4, o, ldo); break;
				}
			}
			continue;
		}
		// Rows of x two at a time, each as it is alone; W's row stays in
		// L1 between pairs.
		for (int i0 = 0; i0 < m; i0 += 2) {
			if (m - i0 >= 2)
				rows(x + (size_t)i0 * k, k, wr, kind, 2, out + (size_t)i0 * ldo + j, ldo);
			else
				rows(x + (size_t)i0 * k, k, wr, kind, 1, out + (size_t)i0 * ldo + j, ldo);
		}
	}
}

HF static void mm_t_bf16(const float* x, int m, int k, const uint16_t* w, int j0, int j1, float* out, int ldo) {
	mm_t(x, m, k, w, HARK_BF16, j0, j1, out, ldo);
}

HF static void mm_t_f16(const float* x, int m, int k, const uint16_t* w, int j0, int j1, float* out, int ldo) {
	mm_t(x, m, k, w, HARK_F16, j0, j1, out, ldo);
}

int hark_hmm_t_simd(const float* x, int m, int k, const uint16_t* w, int kind, int j0, int j1, float* out, int ldo) {
	if (!hf_ok()) return 0;
	if (kind == HARK_BF16)
		mm_t_bf16(x, m, k, w, j0, j1, out, ldo);
	else
		mm_t_f16(x, m, k, w, j0, j1, out, ldo);
	return 1;
}

// mm_n walks W [k, n] a row at a time over column segments of SEG values
// (one segment of each row of out stays in L1) and adds x[i, p] times the
// widened segment into every row of out.
#define SEG 512
HF_INLINE void mm_n(const float* x, int m, int k, int n, const uint16_t* w, int kind, int c0, int c1, float* out,
                    int ldo) {
	for (int cb = c0; cb < c1; cb += SEG) {
		int len = c1 - cb < SEG ? c1 - cb : SEG, len8 = len & ~7;
		for (int i = 0; i < m; i++) memset(out + (size_t)i * ldo + cb, 0, (size_t)len * sizeof(float));
		for (int p = 0; p < k; p++) {
			const uint16_t* wr = w + (size_t)p * n + cb;
			for (int i = 0; i < m; i++) {
				float a = x[(size_t)i * k + p], *o = out + (size_t)i * ldo + cb;
				__m256 va = _mm256_set1_ps(a);
				int c = 0;
				for (; c < len8; c += 8)
					_mm256_storeu_ps(o + c, _mm256_fmadd_ps(va, ld8(wr + c, kind), _mm256_loadu_ps(o + c)));
				for (; c < len; c++) o[c] += a * hark_h1(wr[c], kind);
			}
		}
	}
}

HF static void mm_n_bf16(const float* x, int m, int k, int n, const uint16_t* w, int c0, int c1, float* out, int ldo) {
	mm_n(x, m, k, n, w, HARK_BF16, c0, c1, out, ldo);
}

HF static void mm_n_f16(const float* x, int m, int k, int n, const uint16_t* w, int c0, int c1, float* out, int ldo) {
	mm_n(x, m, k, n, w, HARK_F16, c0, c1, out, ldo);
}

int hark_hmm_n_simd(const float* x, int m, int k, int n, const uint16_t* w, int kind, int c0, int c1, float* out,
                    int ldo) {
	if (!hf_ok()) return 0;
	if (kind == HARK_BF16)
		mm_n_bf16(x, m, k, n, w, c0, c1, out, ldo);
	else
		mm_n_f16(x, m, k, n, w, c0, c1, out, ldo);
	return 1;
}

HF static void h2f(const uint16_t* src, size_t n, int kind, float* dst) {
	size_t i = 0;
	if (kind == HARK_BF16)
		for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, ld8(src + i, HARK_BF16));
	else
		for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, ld8(src + i, HARK_F16));
	for (; i < n; i++) dst[i] = hark_h1(src[i], kind);
}

int hark_h2f_simd(const uint16_t* src, size_t n, int kind, float* dst) {
	if (!hf_ok()) return 0;
	h2f(src, n, kind, dst);
	return 1;
}
