//go:build cgo

// NEON kernels for 16-bit float weights on arm64 (NEON and the f16
// conversions are baseline ARMv8-A, so no run-time check): bf16 widens
// with a shift-left-long by 16, f16 with fcvtl.

#include <arm_neon.h>
#include <string.h>
#include "hmatmul.h"

// ld4x2 widens 8 values at p into lo (first 4) and hi (last 4); kind is
// a constant after inlining.
static inline __attribute__((always_inline)) void ld4x2(const uint16_t* p, int kind, float32x4_t* lo,
                                                        float32x4_t* hi) {
	uint16x8_t v = vld1q_u16(p);
	if (kind == HARK_BF16) {
		*lo = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(v), 16));
		*hi = vreinterpretq_f32_u32(vshll_n_u16(vget_high_u16(v), 16));
	} else {
		float16x8_t h = vreinterpretq_f16_u16(v);
		*lo = vcvt_f32_f16(vget_low_f16(h));
		*hi = vcvt_high_f32_f16(h);
	}
}

// rows computes NI (1..4) rows of x against one row of W, widening each
// vector of W once for all of them.
static inline __attribute__((always_inline)) void rows(const float* x, int k, const uint16_t* wr, int kind, int NI,
                                                       float* out, size_t ldo) {
	float32x4_t a0[4], a1[4];
	for (int ii = 0; ii < NI; ii++) a0[ii] = a1[ii] = vdupq_n_f32(0);
	int p = 0;
	for (; p + 8 <= k; p += 8) {
		float32x4_t w0, w1;
		ld4x2(wr + p, kind, &w0, &w1);
		for (int ii = 0; ii < NI; ii++) {
			a0[ii] = vfmaq_f32(a0[ii], w0, vld1q_f32(x + (size_t)ii * k + p));
			a1[ii] = vfmaq_f32(a1[ii], w1, vld1q_f32(x + (size_t)ii * k + p + 4));
		}
	}
	if (p < k) {
		// Zero-padded copies: the padding multiplies 0 by 0.
		uint16_t wt[8] = {0};
		memcpy(wt, wr + p, (size_t)(k - p) * sizeof(uint16_t));
		float32x4_t w0, w1;
		ld4x2(wt, kind, &w0, &w1);
		for (int ii = 0; ii < NI; ii++) {
			float xt[8] = {0};
			memcpy(xt, x + (size_t)ii * k + p, (size_t)(k - p) * sizeof(float));
			a0[ii] = vfmaq_f32(a0[ii], w0, vld1q_f32(xt));
			a1[ii] = vfmaq_f32(a1[ii], w1, vld1q_f32(xt + 4));
		}
	}
	for (int ii = 0; ii < NI; ii++) out[(size_t)ii * ldo] = vaddvq_f32(vaddq_f32(a0[ii], a1[ii]));
}

static inline __attribute__((always_inline)) void mm_t(const float* x, int m, int k, const uint16_t* w, int kind,
                                                       int j0, int j1, float* out, int ldo) {
	for (int j = j0; j < j1; j++) {
		const uint16_t* wr = w + (size_t)j * k;
		for (int i0 = 0; i0 < m; i0 += 4) {
			const float* xi = x + (size_t)i0 * k;
			float* o = out + (size_t)i0 * ldo + j;
			switch (m - i0) {
			case 1: rows(xi, k, wr, kind, 1, o, ldo); break;
			case 2: rows(xi, k, wr, kind, 2, o, ldo); break;
			case 3: rows(xi, k, wr, kind, 3, o, ldo); break;
			default: rows(xi, k, wr, kind, 4, o, ldo); break;
			}
		}
	}
}

int hark_hmm_t_simd(const float* x, int m, int k, const uint16_t* w, int kind, int j0, int j1, float* out, int ldo) {
	if (kind == HARK_BF16)
		mm_t(x, m, k, w, HARK_BF16, j0, j1, out, ldo);
	else
		mm_t(x, m, k, w, HARK_F16, j0, j1, out, ldo);
	return 1;
}

// mm_n adds x[i, p] times a widened segment of row p of W [k, n] into
// every row of out, over column segments of SEG values that stay in L1.
#define SEG 512
static inline __attribute__((always_inline)) void mm_n(const float* x, int m, int k, int n, const uint16_t* w,
                                                       int kind, int c0, int c1, float* out, int ldo) {
	for (int cb = c0; cb < c1; cb += SEG) {
		int len = c1 - cb < SEG ? c1 - cb : SEG, len8 = len & ~7;
		for (int i = 0; i < m; i++) memset(out + (size_t)i * ldo + cb, 0, (size_t)len * sizeof(float));
		for (int p = 0; p < k; p++) {
			const uint16_t* wr = w + (size_t)p * n + cb;
			for (int i = 0; i < m; i++) {
				float a = x[(size_t)i * k + p], *o = out + (size_t)i * ldo + cb;
				int c = 0;
				for (; c < len8; c += 8) {
					float32x4_t w0, w1;
					ld4x2(wr + c, kind, &w0, &w1);
					vst1q_f32(o + c, vfmaq_n_f32(vld1q_f32(o + c), w0, a));
					vst1q_f32(o + c + 4, vfmaq_n_f32(vld1q_f32(o + c + 4), w1, a));
				}
				for (; c < len; c++) o[c] += a * hark_h1(wr[c], kind);
			}
		}
	}
}

int hark_hmm_n_simd(const float* x, int m, int k, int n, const uint16_t* w, int kind, int c0, int c1, float* out,
                    int ldo) {
	if (kind == HARK_BF16)
		mm_n(x, m, k, n, w, HARK_BF16, c0, c1, out, ldo);
	else
		mm_n(x, m, k, n, w, HARK_F16, c0, c1, out, ldo);
	return 1;
}

int hark_h2f_simd(const uint16_t* src, size_t n, int kind, float* dst) {
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		float32x4_t lo, hi;
		if (kind == HARK_BF16)
			ld4x2(src + i, HARK_BF16, &lo, &hi);
		else
			ld4x2(src + i, HARK_F16, &lo, &hi);
		vst1q_f32(dst + i, lo);
		vst1q_f32(dst + i + 4, hi);
	}
	for (; i < n; i++) dst[i] = hark_h1(src[i], kind);
	return 1;
}
