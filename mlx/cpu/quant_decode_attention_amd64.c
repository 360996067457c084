//go:build cgo

// QuantizedDecodeAttention's loops in AVX-512 (quant_decode_attention.go),
// for head sizes that are a multiple of 16: blocks of 64 key or value rows
// are dequantized into an L1 scratch, then read as hark_attn_decode512
// (attn_decode_amd64.c) reads a float32 cache: 16 keys per head with one
// transposing reduction, values for several heads per pass.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define AT __attribute__((target("avx512f,fma")))
#define ATI __attribute__((target("avx512f,fma"), always_inline)) static inline

enum { qblock = 64 };

// sum16 is attn_decode_amd64.c's: lane j of the result sums a[j].
ATI __m512 qsum16(__m512 a[16]) {
	__m512 b[8], c[4], d[2];
	for (int i = 0; i < 8; i++)
		b[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0x44), _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0xEE));
	for (int i = 0; i < 4; i++)
		c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0x88), _mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0xDD));
	for (int i = 0; i < 2; i++)
		d[i] = _mm512_add_ps(_mm512_unpacklo_ps(c[2 * i], c[2 * i + 1]), _mm512_unpackhi_ps(c[2 * i], c[2 * i + 1]));
	__m512 e = _mm512_add_ps(_mm512_unpacklo_ps(d[0], d[1]), _mm512_unpackhi_ps(d[0], d[1]));
	const __m512i back = _mm512_setr_epi32(0, 4, 8, 12, 2, 6, 10, 14, 1, 5, 9, 13, 3, 7, 11, 15);
	return _mm512_permutexvar_ps(back, e);
}

// dequant_block writes rows [0, nj) of codes as floats into blk (rows of d),
// 16 values per step: bytes (8 bits) or nibbles, low first.
ATI void dequant_block(float *blk, const uint32_t *codes, const float *s, const float *b, int nj, int d, int g, int bits) {
	const int ng = d / g, nw = d * bits / 32;
	for (int j = 0; j < nj; j++) {
		const uint8_t *c = (const uint8_t *)(codes + (size_t)j * nw);
		float *x = blk + (size_t)j * d;
		for (int i = 0; i < d; i += 16) {
			__m512i w;
			if (bits == 8) {
				w = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(c + i)));
			} else {
				// 8 bytes hold 16 nibbles: value 2k is byte k's low half.
				__m512i by = _mm512_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(c + i / 2)));
				__m512i lo = _mm512_and_si512(by, _mm512_set1_epi32(15)), hi = _mm512_srli_epi32(by, 4);
				// interleave: lanes 0..7 of lo/hi -> 16 values lo0 hi0 lo1 hi1 ...
				const __m512i idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
				w = _mm512_permutex2var_epi32(lo, idx, hi);
			}
			const int gi = (size_t)j * ng + i / g;
			_mm512_storeu_ps(x + i, _mm512_fmadd_ps(_mm512_cvtepi32_ps(w), _mm512_set1_ps(s[gi]), _mm512_set1_ps(b[gi])));
		}
	}
}

ATI void scores_d(const float *q, int rep, const int d, int n, int g, int bits, float scale, const uint32_t *kp,
                  const float *ks, const float *kb, float *blk, float *sc) {
	const __m512 scv = _mm512_set1_ps(scale);
	const int ng = d / g, nw = d * bits / 32;
	for (int jb = 0; jb < n; jb += qblock) {
		const int nj = n - jb < qblock ? n - jb : qblock;
		dequant_block(blk, kp + (size_t)jb * nw, ks + (size_t)jb * ng, kb + (size_t)jb * ng, nj, d, g, bits);
		for (int h = 0; h < rep; h++) {
			const float *qh = q + (size_t)h * d;
			float *sh = sc + (size_t)h * n + jb;
			for (int j0 = 0; j0 < nj; j0 += 16) {
				__m512 acc[16];
				const float *kr[16];
#pragma GCC unroll 16
				for (int j = 0; j < 16; j++) {
					acc[j] = _mm512_setzero_ps();
					kr[j] = blk + (size_t)(j0 + j < nj ? j0 + j : nj - 1) * d;
				}
#pragma GCC unroll 8
				for (int c = 0; c < d; c += 16) {
					const __m512 qv = _mm512_loadu_ps(qh + c);
#pragma GCC unroll 16
					for (int j = 0; j < 16; j++) acc[j] = _mm512_fmadd_ps(_mm512_loadu_ps(kr[j] + c), qv, acc[j]);
				}
				const int m = nj - j0 < 16 ? nj - j0 : 16;
				_mm512_mask_storeu_ps(sh + j0, (__mmask16)((1u << m) - 1), _mm512_mul_ps(qsum16(acc), scv));
			}
		}
	}
}

AT void hark_qattn_scores512(const float *q, int rep, int d, int n, int g, int bits, float scale, const uint32_t *kp,
                             const float *ks, const float *kb, float *blk, float *sc) {
	if (d == 64) scores_d(q, rep, 64, n, g, bits, scale, kp, ks, kb, blk, sc);
	else if (d == 128) scores_d(q, rep, 128, n, g, bits, scale, kp, ks, kb, blk, sc);
	else scores_d(q, rep, d, n, g, bits, scale, kp, ks, kb, blk, sc);
}

// values_acc adds sum_j p[h*n + j] * v[j] (nj rows) to o[h] for nh heads.
ATI void values_acc(const float *p, int n, const float *v, int nj, const int d, const int nh, float *o) {
	const int nc = d / 16;
	__m512 acc[16];
	for (int hh = 0; hh < nh; hh++)
		for (int c = 0; c < nc; c++) acc[hh * nc + c] = _mm512_loadu_ps(o + (size_t)hh * d + 16 * c);
	for (int j = 0; j < nj; j++) {
		const float *vr = v + (size_t)j * d;
#pragma GCC unroll 8
		for (int c = 0; c < nc; c++) {
			const __m512 vv = _mm512_loadu_ps(vr + 16 * c);
#pragma GCC unroll 16
			for (int hh = 0; hh < nh; hh++) acc[hh * nc + c] = _mm512_fmadd_ps(_mm512_set1_ps(p[(size_t)hh * n + j]), vv, acc[hh * nc + c]);
		}
	}
	for (int hh = 0; hh < nh; hh++)
		for (int c = 0; c < nc; c++) _mm512_storeu_ps(o + (size_t)hh * d + 16 * c, acc[hh * nc + c]);
}

ATI void values_d(const float *p, int rep, const int d, int n, int g, int bits, const uint32_t *vp, const float *vs,
                  const float *vb, float *blk, float *o) {
	const int ng = d / g, nw = d * bits / 32, nc = d / 16, hpc = nc >= 16 ? 1 : 16 / nc;
	for (size_t i = 0; i < (size_t)rep * d; i++) o[i] = 0;
	for (int jb = 0; jb < n; jb += qblock) {
		const int nj = n - jb < qblock ? n - jb : qblock;
		dequant_block(blk, vp + (size_t)jb * nw, vs + (size_t)jb * ng, vb + (size_t)jb * ng, nj, d, g, bits);
		int h0 = 0;
		for (; h0 + hpc <= rep; h0 += hpc) values_acc(p + (size_t)h0 * n + jb, n, blk, nj, d, hpc, o + (size_t)h0 * d);
		if (h0 < rep) values_acc(p + (size_t)h0 * n + jb, n, blk, nj, d, rep - h0, o + (size_t)h0 * d);
	}
}

AT void hark_qattn_values512(const float *p, int rep, int dv, int n, int g, int bits, const uint32_t *vp, const float *vs,
                             const float *vb, float *blk, float *o) {
	if (dv == 64) values_d(p, rep, 64, n, g, bits, vp, vs, vb, blk, o);
	else if (dv == 128) values_d(p, rep, 128, n, g, bits, vp, vs, vb, blk, o);
	else values_d(p, rep, dv, n, g, bits, vp, vs, vb, blk, o);
}
