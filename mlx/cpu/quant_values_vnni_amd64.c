//go:build cgo

// The int16 values of QuantizedDecodeAttention (quant_decode_attention.go)
// with AVX-512 VNNI: sum_j p_j·(s_j∘c_j + b_j) per group is
// sum_j w_j·c_j + sum_j p_j·b_j with w = p·s. Per block of qblock keys,
// head and group, w is rounded to int16 (step max|w|/32767, to nearest),
// and VPDPWSSD adds two keys' w·c per lane exactly in int32 (a block's sum
// is below 2^31); the sums are scaled back in float once per block. With
// Δ = w - step·wi and mid the middle of the codes' range (128 or 8), the
// bias sum also takes mid·ΣΔ, so an output is off by at most
// Σ_blocks (step/2)·Σ_j |c_j - mid|, a 65534th of the block's largest
// weight per key at most (the test derives its tolerance from this).
// Two keys' codes are interleaved as 16-bit pairs by one VPERMT2B that
// zeroes the high bytes; 4-bit rows split into low and high nibble planes,
// so the outputs come out permuted, which the end undoes.

#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "quant_shapes.h"

#define ATV __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vnni,fma"), always_inline)) static inline

enum { vblock = 64 };

int hark_qvalues_vnni_ok(void) {
	static volatile int cached = -1;
	if (cached < 0) {
		__builtin_cpu_init();
		cached = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		         __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vnni") &&
		         __builtin_cpu_supports("fma");
	}
	return cached;
}

// vec_elem is the first output element of vector v of a row (lane l is
// element vec_elem + l·(bits == 4 ? 2 : 1)): rows go in chunks of up to 64
// bytes, each as vpp vectors of 16 bytes (per nibble plane for 4 bits).
ATV int vec_elem(int v, const int bits, const int vpp) {
	if (bits == 8) return v * 16;
	const int ch = v / (2 * vpp), pl = v / vpp % 2, e = v % vpp;
	return ch * 128 + 32 * e + pl;
}

// wq_block rounds the block's weights w = p·s of one head and group to
// int16 (wi, keys past nj weigh 0) and returns the step; bsum (16 lanes)
// gets p·b + mid·Δ. sT and bT are the group's scales and biases of the
// block's keys. A weight that is not finite makes the step NaN, so the
// head's outputs are not finite either, as with float weights: the
// largest |w| is taken on the bits, where a NaN or an infinity is above
// every finite float.
ATV float wq_block(const float *ph, const float *sT, const float *bT, int nj, int mid, int16_t *wi, __m512 *bsum) {
	__m512 w[vblock / 16], bs = *bsum;
	__m512i amax = _mm512_setzero_si512();
	const __m512i abs = _mm512_set1_epi32(0x7FFFFFFF);
	for (int t = 0; t < vblock / 16; t++) {
		const __mmask16 mk = (__mmask16)(nj - 16 * t >= 16 ? 0xFFFF : nj > 16 * t ? (1u << (nj - 16 * t)) - 1 : 0);
		const __m512 pv = _mm512_maskz_loadu_ps(mk, ph + 16 * t);
		w[t] = _mm512_mul_ps(pv, _mm512_maskz_loadu_ps(mk, sT + 16 * t));
		amax = _mm512_max_epu32(amax, _mm512_and_si512(_mm512_castps_si512(w[t]), abs));
		bs = _mm512_fmadd_ps(pv, _mm512_maskz_loadu_ps(mk, bT + 16 * t), bs);
	}
	const uint32_t mb = _mm512_reduce_max_epu32(amax);
	if (mb >= 0x7F800000u) {
		for (int j = 0; j < vblock; j++) wi[j] = 0;
		*bsum = bs;
		return NAN;
	}
	float m;
	__builtin_memcpy(&m, &mb, sizeof m);
	const float step = m / 32767, inv = m > 0 ? 32767 / m : 0;
	const __m512 iv = _mm512_set1_ps(inv), st = _mm512_set1_ps(step);
	__m512 delta = _mm512_setzero_ps();
	for (int t = 0; t < vblock / 16; t++) {
		// to nearest, even on ties (the default rounding, as Go leaves it)
		const __m512i ri = _mm512_cvtps_epi32(_mm512_mul_ps(w[t], iv));
		_mm256_storeu_si256((__m256i *)(wi + 16 * t), _mm512_cvtepi32_epi16(ri));
		delta = _mm512_fnmadd_ps(st, _mm512_cvtepi32_ps(ri), _mm512_add_ps(delta, w[t]));
	}
	*bsum = _mm512_fmadd_ps(_mm512_set1_ps((float)mid), delta, bs);
	return step;
}

// dpwssd_w is acc + VPDPWSSD(x, w broadcast), written out: GCC 12 moves
// the accumulator of _mm512_dpwssd_epi32 to another register and back
// around every one, and does not fold the broadcast into the instruction,
// which tripled the loop's instructions.
ATV __m512i dpwssd_w(__m512i acc, __m512i x, const int32_t *w) {
	__asm__("vpdpwssd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(x), "m"(*w));
	return acc;
}

// pass_vnni adds the block's w·c for nh heads (at most 8; wq: per head,
// ng groups of vblock/2 pairs) to their permuted float sums fo (nh rows of
// d). Each vector of a row is one loop over the block's key pairs: one
// interleave feeds nh independent accumulators, which stay in registers
// (with all of a row's vectors at once, 16 accumulators and the
// interleaves' operands did not fit, and the spills cost more than
// re-reading the block's codes from L1 once per vector).
ATV void pass_vnni(const uint32_t *vp, int nj, const int d, const int g, const int bits, const int nh,
                   const int32_t *wq, const float *step, const __m512i *idx, float *fo) {
	const int ng = d / g, nc = d / 16, rb = d * bits / 8, cb = rb < 64 ? rb : 64, vpp = cb / 16;
	const int nw = d * bits / 32, np = bits == 4 ? 2 : 1;
	const __mmask64 lmask = cb == 64 ? ~(__mmask64)0 : (((__mmask64)1 << cb) - 1), zmask = 0x5555555555555555ull;
	const __m512i lo = _mm512_set1_epi8(15);
	for (int v = 0; v < nc; v++) {
		const int ch = v / (np * vpp), pl = v / vpp % np, e = v % vpp, gv = vec_elem(v, bits, vpp) / g;
		const __m512i ix = _mm512_load_si512(idx + e);
		const int32_t *w = wq + (size_t)gv * (vblock / 2);
		__m512i acc[8];
#pragma GCC unroll 8
		for (int hh = 0; hh < nh; hh++) acc[hh] = _mm512_setzero_si512();
		for (int j = 0; j < nj; j += 2) {
			const uint8_t *ra = (const uint8_t *)(vp + (size_t)j * nw) + 64 * ch;
			const uint8_t *rbp = j + 1 < nj ? ra + (size_t)nw * 4 : ra;
			__m512i a = _mm512_maskz_loadu_epi8(lmask, ra), b = _mm512_maskz_loadu_epi8(lmask, rbp);
			if (bits == 4) {
				if (pl) a = _mm512_srli_epi16(a, 4), b = _mm512_srli_epi16(b, 4);
				a = _mm512_and_si512(a, lo), b = _mm512_and_si512(b, lo);
			}
			const __m512i x = _mm512_maskz_permutex2var_epi8(zmask, a, ix, b);
#pragma GCC unroll 8
			for (int hh = 0; hh < nh; hh++)
				acc[hh] = dpwssd_w(acc[hh], x, w + (size_t)hh * ng * (vblock / 2) + j / 2);
		}
#pragma GCC unroll 8
		for (int hh = 0; hh < nh; hh++) {
			float *f = fo + (size_t)hh * d + 16 * v;
			_mm512_storeu_ps(f, _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[hh]), _mm512_set1_ps(step[hh * ng + gv]), _mm512_loadu_ps(f)));
		}
	}
}

ATV void values_vnni(const float *p, int rep, const int d, int n, const int g, const int bits, const uint32_t *vp,
                     const float *vs, const float *vb, float *blk, float *o, const float *pinv) {
	const int ng = d / g, nw = d * bits / 32, nc = d / 16, mid = bits == 8 ? 128 : 8;
	const int rb = d * bits / 8, vpp = (rb < 64 ? rb : 64) / 16;
	// blk (64-byte aligned): 4 permutation vectors, rep·ng·vblock/2 weight
	// pairs, rep·ng steps, rep·ng·16 bias sums, ng·vblock scales and
	// biases, rep·d permuted float sums.
	__m512i *idx = (__m512i *)(((uintptr_t)blk + 63) & ~(uintptr_t)63);
	int32_t *wq = (int32_t *)(idx + 4);
	float *step = (float *)(wq + (size_t)rep * ng * (vblock / 2)), *bias = step + rep * ng, *sT = bias + (size_t)rep * ng * 16;
	float *bT = sT + (size_t)ng * vblock, *fo = bT + (size_t)ng * vblock;
	for (int e = 0; e < 4; e++) {
		uint8_t *t = (uint8_t *)(idx + e);
		for (int l = 0; l < 16; l++) t[4 * l] = 16 * e + l, t[4 * l + 1] = 0, t[4 * l + 2] = 64 + 16 * e + l, t[4 * l + 3] = 0;
	}
	for (size_t i = 0; i < (size_t)rep * d; i++) fo[i] = 0;
	for (size_t i = 0; i < (size_t)rep * ng * 16; i++) bias[i] = 0;
	for (int jb = 0; jb < n; jb += vblock) {
		const int nj = n - jb < vblock ? n - jb : vblock;
		// One group per row: the block's scales and biases are read in
		// place (wq_block reads only the first nj).
		const float *sTr = vs + jb, *bTr = vb + jb;
		if (ng > 1) {
			sTr = sT, bTr = bT;
			for (int gg = 0; gg < ng; gg++)
				for (int j = 0; j < nj; j++) {
					sT[gg * vblock + j] = vs[(size_t)(jb + j) * ng + gg];
					bT[gg * vblock + j] = vb[(size_t)(jb + j) * ng + gg];
				}
		}
		for (int h = 0; h < rep; h++)
			for (int gg = 0; gg < ng; gg++) {
				__m512 bs = _mm512_loadu_ps(bias + ((size_t)h * ng + gg) * 16);
				step[h * ng + gg] = wq_block(p + (size_t)h * n + jb, sTr + gg * vblock, bTr + gg * vblock, nj, mid,
				                             (int16_t *)(wq + ((size_t)h * ng + gg) * (vblock / 2)), &bs);
				_mm512_storeu_ps(bias + ((size_t)h * ng + gg) * 16, bs);
			}
		const uint32_t *vpb = vp + (size_t)jb * nw;
		int h0 = 0;
#define PV(nh) pass_vnni(vpb, nj, d, g, bits, nh, wq + (size_t)h0 * ng * (vblock / 2), step + h0 * ng, idx, fo + (size_t)h0 * d)
		for (; h0 + 8 <= rep; h0 += 8) PV(8);
		switch (rep - h0) {
		case 0: break;
		case 1: PV(1); break;
		case 2: PV(2); break;
		case 3: PV(3); break;
		case 4: PV(4); break;
		case 5: PV(5); break;
		case 6: PV(6); break;
		case 7: PV(7); break;
		}
#undef PV
	}
	for (int h = 0; h < rep; h++) {
		// Each group's bias sum once (ng <= 8: rows of at most 256 in
		// groups of at least 32), not once per output: at a short
		// context the per-output reductions took longer than the loop.
		float bs[8];
		for (int gg = 0; gg < ng; gg++) bs[gg] = _mm512_reduce_add_ps(_mm512_loadu_ps(bias + ((size_t)h * ng + gg) * 16));
		const float k = pinv ? pinv[h] : 1;
		for (int v = 0; v < nc; v++) {
			const int e0 = vec_elem(v, bits, vpp), stride = bits == 4 ? 2 : 1;
			for (int l = 0; l < 16; l++) {
				const int i = e0 + l * stride;
				o[(size_t)h * d + i] = k * (fo[(size_t)h * d + 16 * v + l] + bs[i / g]);
			}
		}
	}
}

// hark_qattn_values_vnni is hark_qattn_values512 with int16 weights, for
// values of a multiple of 32 in groups of a multiple of 32; blk holds
// qDotScratch floats. With pinv, p's rows are softmax numerators and head
// h's outputs are scaled by pinv[h] (hark_softmax512_exp): rounding w per
// block to its largest is the same for any scale of p.
__attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vnni,fma"))) void hark_qattn_values_vnni(
	const float *p, int rep, int dv, int n, int g, int bits, const uint32_t *vp, const float *vs, const float *vb,
	float *blk, float *o, const float *pinv) {
#define VV(D, G, B) values_vnni(p, rep, D, n, G, B, vp, vs, vb, blk, o, pinv)
	QATTN_SHAPES(dv, g, bits, VV);
#undef VV
}
