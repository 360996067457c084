// Inner loops of single-query attention (decode), kept in C so the compiler
// can vectorise them; Go does not emit SIMD. Built only with cgo; the Go
// versions in attn_rows_nocgo.go compute the same sums.
#include <stddef.h>

#include "simd_clones.h"

// s[j] = scale * dot(q, k[j*ldk .. j*ldk+d)) for j < n. Eight independent
// partial sums let the compiler use full vector registers without
// reassociating floating-point math on its own.
HARK_CLONES void hark_attn_scores(const float *q, const float *k, int n, int d, int ldk, float scale, float *s) {
	for (int j = 0; j < n; j++) {
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
		s[j] = scale * ((((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))) + tail);
	}
}

// o = sum_j p[j] * v[j*ldv .. j*ldv+dv); rows with zero weight (masked keys)
// are skipped. The sums run over j in order for each output, as before,
// but 64 outputs at a time in a local block the compiler keeps in vector
// registers instead of reading and writing o for every key.
HARK_CLONES void hark_attn_values(const float *p, const float *v, int n, int dv, int ldv, float *o) {
	for (int i0 = 0; i0 < dv; i0 += 64) {
		const int w = dv - i0 < 64 ? dv - i0 : 64;
		float acc[64] = {0};
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
