// Inner loops of single-query attention (decode), kept in C so the compiler
// can vectorise them; Go does not emit SIMD. Built only with cgo; the Go
// versions in attn_rows_nocgo.go compute the same sums.
#include <stddef.h>

#include "simd_clones.h"

// __builtin_shufflevector: clang, and GCC from 12 (older GCC takes the
// one-key-at-a-time loop).
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define HARK_SHUFFLE 1
#endif

// The eight partial sums of one key, combined in a fixed order.
static inline __attribute__((always_inline)) float hark_sum8(const float *a) {
	return ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]));
}

// hark_v8 is eight floats in GCC/clang's generic vector extension (lowered
// to whatever the target has); aligned(4) lets it load from any float.
typedef float hark_v8 __attribute__((vector_size(32), aligned(4)));

#ifdef HARK_SHUFFLE
// hark_sum8x8 stores, scaled, the eight sums of eight keys' partial sums, each
// combined in the order of hark_sum8, by three rounds of shuffles that
// pair up lanes across keys (about three operations per key instead of a
// full horizontal sum each).
static inline __attribute__((always_inline)) void hark_sum8x8(const hark_v8 a[8], float scale, float *out) {
	hark_v8 h[4], f[2];
	for (int t = 0; t < 4; t++) // lanes: x0+x4 x1+x5 x2+x6 x3+x7 | same for y
		h[t] = __builtin_shufflevector(a[2 * t], a[2 * t + 1], 0, 1, 2, 3, 8, 9, 10, 11) +
		       __builtin_shufflevector(a[2 * t], a[2 * t + 1], 4, 5, 6, 7, 12, 13, 14, 15);
	for (int t = 0; t < 2; t++) // (x0+x4)+(x1+x5), (x2+x6)+(x3+x7) for four keys
		f[t] = __builtin_shufflevector(h[2 * t], h[2 * t + 1], 0, 2, 4, 6, 8, 10, 12, 14) +
		       __builtin_shufflevector(h[2 * t], h[2 * t + 1], 1, 3, 5, 7, 9, 11, 13, 15);
	*(hark_v8 *)out = scale * (__builtin_shufflevector(f[0], f[1], 0, 2, 4, 6, 8, 10, 12, 14) +
	                           __builtin_shufflevector(f[0], f[1], 1, 3, 5, 7, 9, 11, 13, 15));
}
#endif

// s[j] = scale * dot(q, k[j*ldk .. j*ldk+d)) for j < n. Eight independent
// partial sums let the compiler use full vector registers without
// reassociating floating-point math on its own. Eight keys at a time give
// eight independent chains of vector FMAs (one key waited on each FMA's
// latency in turn) and share one reduction; each key's sums run in the
// same order on either path.
static inline __attribute__((always_inline)) void scores_body(const float *q, const float *k, int n, int d, int ldk, float scale, float *s) {
	int j = 0;
#ifdef HARK_SHUFFLE
	if (d % 8 == 0) {
		for (; j + 8 <= n; j += 8) {
			const float *k0 = k + (size_t)j * ldk, *k1 = k0 + ldk, *k2 = k1 + ldk, *k3 = k2 + ldk;
			const float *k4 = k3 + ldk, *k5 = k4 + ldk, *k6 = k5 + ldk, *k7 = k6 + ldk;
			hark_v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
			for (int i = 0; i < d; i += 8) {
				const hark_v8 qv = *(const hark_v8 *)(q + i);
				a0 += qv * *(const hark_v8 *)(k0 + i);
				a1 += qv * *(const hark_v8 *)(k1 + i);
				a2 += qv * *(const hark_v8 *)(k2 + i);
				a3 += qv * *(const hark_v8 *)(k3 + i);
				a4 += qv * *(const hark_v8 *)(k4 + i);
				a5 += qv * *(const hark_v8 *)(k5 + i);
				a6 += qv * *(const hark_v8 *)(k6 + i);
				a7 += qv * *(const hark_v8 *)(k7 + i);
			}
			const hark_v8 a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
			hark_sum8x8(a, scale, s + j);
		}
	}
#endif
	for (; j < n; j++) {
		const float *kr = k + (size_t)j * ldk;
		float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
		int i = 0;
		for (; i + 8 <= d; i += 8) {
			for (int u = 0; u < 8; u++) {
				acc[u] += q[i + u] * kr[i + u];
			}
		}
		float tail = 0;
		for (; i < d; i++) {
			tail += q[i] * kr[i];
		}
		s[j] = scale * (hark_sum8(acc) + tail);
	}
}

HARK_CLONES void hark_attn_scores(const float *q, const float *k, int n, int d, int ldk, float scale, float *s) {
	scores_body(q, k, n, d, ldk, scale, s);
}

// o = sum_j p[j] * v[j*ldv .. j*ldv+dv); rows with zero weight (masked keys)
// are skipped. The sums run over j in order for each output, as before,
// but 64 outputs at a time in a local block the compiler keeps in vector
// registers instead of reading and writing o for every key.
static inline __attribute__((always_inline)) void values_body(const float *p, const float *v, int n, int dv, int ldv, float *o, int more) {
	for (int i0 = 0; i0 < dv; i0 += 64) {
		const int w = dv - i0 < 64 ? dv - i0 : 64;
		float acc[64] = {0};
		if (more) {
			for (int u = 0; u < w; u++) acc[u] = o[i0 + u];
		}
		if (w == 64) {
			for (int j = 0; j < n; j++) {
				const float pj = p[j];
				if (pj == 0) {
					continue;
				}
				const float *vr = v + (size_t)j * ldv + i0;
				for (int u = 0; u < 64; u++) {
					acc[u] += pj * vr[u];
				}
			}
		} else {
			for (int j = 0; j < n; j++) {
				const float pj = p[j];
				if (pj == 0) {
					continue;
				}
				const float *vr = v + (size_t)j * ldv + i0;
				for (int u = 0; u < w; u++) {
					acc[u] += pj * vr[u];
				}
			}
		}
		for (int u = 0; u < w; u++) {
			o[i0 + u] = acc[u];
		}
	}
}

HARK_CLONES void hark_attn_values(const float *p, const float *v, int n, int dv, int ldv, float *o) {
	values_body(p, v, n, dv, ldv, o, 0);
}

int hark_softmax_f32(const float *x, float *r, int n);

// hark_attn_decode is single-query attention for the g query heads that
// share one key/value head (grouped-query attention): scores into s (g*n),
// softmax, and the weighted values into o (g*dv). Heads one at a time read
// all n keys and values from L2 for every head; here each block of 64 keys
// and values is read once and used by all g heads while it is in L1. Every
// sum runs in the same order as in hark_attn_scores and hark_attn_values.
// It returns 1, leaving o unspecified, when a score row holds a NaN or
// +Inf (the caller's per-row path decides those).
HARK_CLONES int hark_attn_decode(const float *q, int g, const float *k, const float *v, int n, int d, int dv,
                                 int ldk, int ldv, float scale, float *s, float *o) {
	enum { block = 64 };
	for (int j0 = 0; j0 < n; j0 += block) {
		const int nj = n - j0 < block ? n - j0 : block;
		for (int h = 0; h < g; h++) {
			scores_body(q + (size_t)h * d, k + (size_t)j0 * ldk, nj, d, ldk, scale, s + (size_t)h * n + j0);
		}
	}
	for (int h = 0; h < g; h++) {
		if (hark_softmax_f32(s + (size_t)h * n, s + (size_t)h * n, n)) {
			return 1;
		}
	}
	for (int j0 = 0; j0 < n; j0 += block) {
		const int nj = n - j0 < block ? n - j0 : block;
		for (int h = 0; h < g; h++) {
			values_body(s + (size_t)h * n + j0, v + (size_t)j0 * ldv, nj, dv, ldv, o + (size_t)h * dv, j0 > 0);
		}
	}
	return 0;
}

#if !defined(__x86_64__)
// attn_decode_amd64.c has the AVX-512 kernel; elsewhere it never applies.
int hark_attn512_ok(void) { return 0; }
int hark_attn_decode512(const float *q, int g, const float *k, const float *v, int n, int d, float scale, float *s,
                        float *o, float *lse, int more) {
	return 1;
}
int hark_attn_decode512_f16(const float *q, int g, const unsigned short *k, const unsigned short *v, int n, int d, float scale,
                            float *s, float *o, float *lse, int more) {
	return 1;
}
int hark_softmax512(float *s, int n) { return 1; }
int hark_softmax512_lse(float *s, int n, float *lse) { return 1; }
int hark_softmax512_exp(float *s, int n, float *lse, float *inv) { return 1; }
#endif
