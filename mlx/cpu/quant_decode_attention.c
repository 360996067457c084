//go:build cgo

// The inner loops of the CPU backend's QuantizedDecodeAttention
// (quant_decode_attention.go): a row of 8- or 4-bit codes is dequantized
// into a scratch row once, then every query head that shares the kv head
// reads it. Plain C loops the vectoriser turns into AVX2/AVX-512 clones
// (simd_clones.h); the dot products keep 8 partial sums so they vectorise
// without reassociating a single sum.

#include <stdint.h>
#include "simd_clones.h"

#define AI static inline __attribute__((always_inline))

// dequant_row: codes are little-endian bytes (8 bits) or nibbles, low first.
AI void dequant_row(float *restrict dst, const uint8_t *restrict c, const float *s, const float *b, int d, int g,
                    int bits) {
	if (bits == 8) {
		for (int gg = 0; gg < d / g; gg++) {
			float sv = s[gg], bv = b[gg];
			const uint8_t *cg = c + gg * g;
			float *x = dst + gg * g;
			for (int i = 0; i < g; i++) x[i] = sv * (float)cg[i] + bv;
		}
		return;
	}
	for (int gg = 0; gg < d / g; gg++) {
		float sv = s[gg], bv = b[gg];
		const uint8_t *cg = c + gg * g / 2;
		float *x = dst + gg * g;
		for (int i = 0; i < g / 2; i++) {
			x[2 * i] = sv * (float)(cg[i] & 15) + bv;
			x[2 * i + 1] = sv * (float)(cg[i] >> 4) + bv;
		}
	}
}

HARK_CLONES
void hark_qattn_scores(const float *q, int rep, int d, int n, int g, int bits, float scale, const uint32_t *kp,
                       const float *ks, const float *kb, float *row, float *sc) {
	int kg = d / g, kw = d * bits / 32;
	for (int j = 0; j < n; j++) {
		dequant_row(row, (const uint8_t *)(kp + (long)j * kw), ks + (long)j * kg, kb + (long)j * kg, d, g, bits);
		for (int r = 0; r < rep; r++) {
			const float *qr = q + (long)r * d;
			float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
			for (int i = 0; i < d; i += 8)
				for (int l = 0; l < 8; l++) a[l] += qr[i + l] * row[i + l];
			sc[(long)r * n + j] = scale * (((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7])));
		}
	}
}

HARK_CLONES
void hark_qattn_values(const float *p, int rep, int dv, int n, int g, int bits, const uint32_t *vp, const float *vs,
                       const float *vb, float *row, float *o) {
	int vg = dv / g, vw = dv * bits / 32;
	for (long i = 0; i < (long)rep * dv; i++) o[i] = 0;
	for (int j = 0; j < n; j++) {
		dequant_row(row, (const uint8_t *)(vp + (long)j * vw), vs + (long)j * vg, vb + (long)j * vg, dv, g, bits);
		for (int r = 0; r < rep; r++) {
			float pj = p[(long)r * n + j];
			float *or = o + (long)r * dv;
			for (int i = 0; i < dv; i++) or[i] += pj * row[i];
		}
	}
}

#if !defined(__x86_64__)
// quant_decode_attention_amd64.c has the AVX-512 loops; elsewhere they never run.
void hark_qattn_scores512(const float *q, int rep, int d, int n, int g, int bits, float scale, const uint32_t *kp,
                          const float *ks, const float *kb, float *blk, float *sc) {}
void hark_qattn_values512(const float *p, int rep, int dv, int n, int g, int bits, const uint32_t *vp, const float *vs,
                          const float *vb, float *blk, float *o) {}
int hark_qattn_vnni_ok(void) { return 0; }
int hark_qvalues_vnni_ok(void) { return 0; }
void hark_qattn_values_vnni(const float *p, int rep, int dv, int n, int g, int bits, const uint32_t *vp, const float *vs,
                            const float *vb, float *blk, float *o, const float *pinv) {}
void hark_qattn_scores_vnni(const float *q, int rep, int d, int n, int g, int bits, float scale, const uint32_t *kp,
                            const float *ks, const float *kb, float *blk, float *sc, const void *pf, long pfbytes, int more) {}
#endif
