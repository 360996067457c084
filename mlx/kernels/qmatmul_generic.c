//go:build cgo

// Portable C quantized-matmul kernels: correct for every bit width and
// group size, and the fallback the SIMD kernels defer to.

#include <stddef.h>
#include "qmatmul.h"

// Dequantization must round scale*q before adding the bias, as MLX does.
// GCC contracts a*b+c into an FMA even across statements where the target
// has one (arm64), so turn contraction off for this file; clang only fuses
// within one expression, which the code below never writes.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

// decode_codes converts n codes of one packed row, starting at code index
// start, to floats. Codes form one little-endian bit stream, so a 3/5/6-bit
// code may straddle two words.
static void decode_codes(const uint32_t* row, int bits, int start, int n, float* dst) {
	const uint64_t mask = (1u << bits) - 1;
	for (int j = 0; j < n; j++) {
		int pos = (start + j) * bits;
		int w = pos >> 5, off = pos & 31;
		uint64_t v = row[w] >> off;
		if (off + bits > 32) v |= (uint64_t)row[w + 1] << (32 - off);
		dst[j] = (float)(v & mask);
	}
}

static float dot(const float* a, const float* b, int n) {
	float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	int i = 0;
	for (; i + 4 <= n; i += 4) {
		s0 += a[i] * b[i];
		s1 += a[i + 1] * b[i + 1];
		s2 += a[i + 2] * b[i + 2];
		s3 += a[i + 3] * b[i + 3];
	}
	for (; i < n; i++) s0 += a[i] * b[i];
	return (s0 + s1) + (s2 + s3);
}

void hark_group_sums(const float* x, int m, int k, int gs, float* xsum) {
	int gpr = k / gs;
	for (int i = 0; i < m; i++)
		for (int g = 0; g < gpr; g++) {
			const float* p = x + (size_t)i * k + (size_t)g * gs;
			float s = 0;
			for (int t = 0; t < gs; t++) s += p[t];
			xsum[i * gpr + g] = s;
		}
}

// hark_deinterleave reorders each block of chunk values even-first: a
// 4-bit kernel widening chunk/2 packed bytes gets the even codes from the
// low nibbles and the odd codes from the high nibbles.
void hark_deinterleave(const float* x, int m, int k, int chunk, float* xde) {
	const int half = chunk / 2;
	for (size_t base = 0; base < (size_t)m * k; base += chunk)
		for (int t = 0; t < half; t++) {
			xde[base + t] = x[base + 2 * t];
			xde[base + half + t] = x[base + 2 * t + 1];
		}
}

// qmm_t_generic uses the factored form sum_g (s_g * x·q + b_g * sum(x))
// so each group costs one dot product per row of x.
static void qmm_t_generic(const float* x, const float* xsum, int m, const hark_qmat* q,
                          int j0, int j1, float* out, int ldo) {
	const int k = q->cols, gs = q->gs, gpr = k / gs, wpr = k * q->bits / 32;
	float qbuf[128];
	for (int j = j0; j < j1; j++) {
		const uint32_t* row = q->w + (size_t)j * wpr;
		const float* sc = q->scales + (size_t)j * gpr;
		const float* bi = q->biases + (size_t)j * gpr;
		for (int i0 = 0; i0 < m; i0 += 8) {
			int ni = m - i0 < 8 ? m - i0 : 8;
			float acc[8] = {0};
			for (int g = 0; g < gpr; g++) {
				decode_codes(row, q->bits, g * gs, gs, qbuf);
				for (int ii = 0; ii < ni; ii++) {
					const float* xp = x + (size_t)(i0 + ii) * k + (size_t)g * gs;
					acc[ii] += sc[g] * dot(xp, qbuf, gs) + bi[g] * xsum[(size_t)(i0 + ii) * gpr + g];
				}
			}
			for (int ii = 0; ii < ni; ii++) out[(size_t)(i0 + ii) * ldo + j] = acc[ii];
		}
	}
}

void hark_qmm_t(const float* x, const float* xde, const float* xsum, int m, const hark_qmat* q,
                int j0, int j1, float* out, int ldo, int force) {
	if (force != 1 && hark_qmm_t_simd(x, xde, xsum, m, q, j0, j1, out, ldo, force == 2)) return;
	qmm_t_generic(x, xsum, m, q, j0, j1, out, ldo);
}

// hark_qmm_n streams W [k, n] row by row: each group is dequantized exactly
// as Dequantize does (product rounded before the add) and added, scaled by
// x[i, p], into the output rows; the axpy loop vectorizes.
void hark_qmm_n(const float* x, int m, int k, const hark_qmat* q, int c0, int c1, float* out, int ldo) {
	const int n = q->cols, gs = q->gs, gpr = n / gs, wpr = n * q->bits / 32;
	float seg[128];
	for (int i = 0; i < m; i++)
		for (int c = c0; c < c1; c++) out[(size_t)i * ldo + c] = 0;
	for (int p = 0; p < k; p++) {
		const uint32_t* row = q->w + (size_t)p * wpr;
		for (int c = c0; c < c1; c += gs) {
			int g = c / gs;
			float s = q->scales[(size_t)p * gpr + g], b = q->biases[(size_t)p * gpr + g];
			decode_codes(row, q->bits, c, gs, seg);
			for (int t = 0; t < gs; t++) {
				float prod = s * seg[t];
				seg[t] = prod + b;
			}
			for (int i = 0; i < m; i++) {
				float a = x[(size_t)i * k + p];
				float* o = out + (size_t)i * ldo + c;
				for (int t = 0; t < gs; t++) o[t] += a * seg[t];
			}
		}
	}
}

void hark_dequant(const hark_qmat* q, int r0, int r1, float* out, int force) {
	if (force != 1 && hark_dequant_simd(q, r0, r1, out)) return;
	const int cols = q->cols, gs = q->gs, gpr = cols / gs, wpr = cols * q->bits / 32;
	for (int r = r0; r < r1; r++) {
		const uint32_t* row = q->w + (size_t)r * wpr;
		for (int g = 0; g < gpr; g++) {
			float* o = out + (size_t)(r - r0) * cols + (size_t)g * gs;
			float s = q->scales[(size_t)r * gpr + g], b = q->biases[(size_t)r * gpr + g];
			decode_codes(row, q->bits, g * gs, gs, o);
			for (int t = 0; t < gs; t++) {
				float prod = s * o[t];
				o[t] = prod + b;
			}
		}
	}
}

#if !defined(__x86_64__) && !defined(__aarch64__)
int hark_dequant_simd(const hark_qmat* q, int r0, int r1, float* out) { return 0; }
int hark_cpu_features(void) { return 0; }
int hark_qmm_t_simd(const float* x, const float* xde, const float* xsum, int m, const hark_qmat* q,
                    int j0, int j1, float* out, int ldo, int no512) {
	return 0;
}
#endif

#if !defined(__x86_64__)
int hark_q4i24_ok(int k, int gs) { return 0; }
int hark_q4i24_prep(const float* x, int m, int k, int8_t* xd, float* xsv) { return 0; }
int hark_q4i24_prep_sums(const float* x, int m, int k, int gs, int8_t* xd, float* xsv, float* xsum) { return 0; }
void hark_q4i24(const int8_t* xd, const float* xsv, const float* xsum, int m, const hark_qmat* q,
                int j0, int j1, float* out, int ldo) {}
int hark_pq4_ok(int k, int gs) { return 0; }
size_t hark_pq4_tile_bytes(int k, int gs) { return 0; }
void hark_pq4(const int8_t* xd, const float* xsv, const float* xsum, int m, const uint8_t* p, int k, int gs,
              int n, int t0, int t1, float* out, int ldo) {}
void hark_pq4_dequant(const uint8_t* p, int k, int gs, int r0, int r1, float* out) {}
int hark_pq4_amx_ok(void) { return 0; }
int hark_pq4_amx_cols(int m) { return 0; }
void hark_pq4_amx_prep(const int8_t* xd, const float* xsv, const float* xsum, int m, int k, int gs,
                       int8_t* xb, float* cf, float* xst) {}
void hark_pq4_amx(const int8_t* xb, const float* cf, const float* xst, const int8_t* xd, const float* xsv,
                  const float* xsum, int m, const uint8_t* p, int k, int gs, int n, int t0, int t1, float* out,
                  int ldo) {}
#endif
