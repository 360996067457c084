//go:build cgo

// QuantizedDecodeAttention's loops in AVX-512 (quant_decode_attention.go),
// for head sizes that are a multiple of 16: blocks of 64 key or value rows
// are dequantized into an L1 scratch, then read as hark_attn_decode512
// (attn_decode_amd64.c) reads a float32 cache: 16 keys per head with one
// transposing reduction, values for several heads per pass.

#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "quant_shapes.h"
#include "sum16.h"

#define AT __attribute__((target("avx512f,fma")))
#define ATI __attribute__((target("avx512f,fma"), always_inline)) static inline

enum { qblock = 64 };

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
				_mm512_mask_storeu_ps(sh + j0, (__mmask16)((1u << m) - 1), _mm512_mul_ps(sum16(acc), scv));
			}
		}
	}
}

// transpose16 transposes a 16×16 tile of dwords: lane j of r[i] goes to
// lane i of r[j] (two rounds of unpacks within 128-bit lanes, two of lane
// shuffles).
ATI void transpose16(__m512i r[16]) {
	__m512i t[16];
	for (int i = 0; i < 8; i++) {
		t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
	}
	for (int i = 0; i < 4; i++) {
		r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
		r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
		r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
		r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
	}
	// r[4i+k], 128-bit lane L: rows 4i..4i+3 of column 4L+k.
	for (int k = 0; k < 4; k++) {
		__m512i u0 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0x88), u1 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0xDD);
		__m512i u2 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0x88), u3 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0xDD);
		t[k] = _mm512_shuffle_i32x4(u0, u2, 0x88);
		t[8 + k] = _mm512_shuffle_i32x4(u0, u2, 0xDD);
		t[4 + k] = _mm512_shuffle_i32x4(u1, u3, 0x88);
		t[12 + k] = _mm512_shuffle_i32x4(u1, u3, 0xDD);
	}
	for (int i = 0; i < 16; i++) r[i] = t[i];
}

// codes_tile writes the codes of 16 rows (rows past nj repeat row nj-1)
// as floats, column-major: col[c*16 + j] is value c of row j. The rows'
// words are transposed 16 at a time, so each word then holds one column's
// 4 bytes or 8 nibbles for 16 rows side by side.
ATI void codes_tile(const uint32_t *codes, int nj, const int d, const int bits, float *col) {
	const int nw = d * bits / 32, per = 32 / bits;
	const __m512i lo = _mm512_set1_epi32((1 << bits) - 1);
	for (int w0 = 0; w0 < nw; w0 += 16) {
		const int wc = nw - w0 < 16 ? nw - w0 : 16;
		const __mmask16 mk = (__mmask16)((1u << wc) - 1);
		__m512i r[16];
#pragma GCC unroll 16
		for (int j = 0; j < 16; j++) r[j] = _mm512_maskz_loadu_epi32(mk, codes + (size_t)(j < nj ? j : nj - 1) * nw + w0);
		transpose16(r);
		for (int m = 0; m < wc; m++) {
			float *cm = col + (size_t)(w0 + m) * per * 16;
#pragma GCC unroll 8
			for (int k = 0; k < per; k++)
				_mm512_storeu_ps(cm + 16 * k, _mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(r[m], bits * k), lo)));
		}
	}
}

// heads_tile sets the scores of 16 rows for nh heads from a codes_tile:
// q·(s∘c + b) per group is s·(q·c) + b·Σq, so the codes are read as they
// are and the scale and bias apply once per group (sv, bv: the 16 rows'
// scales and biases of each group; qs: each head's sum per group).
ATI void heads_tile(const float *q, const int nh, const int d, const int g, const float *col, const float *sv,
                    const float *bv, const float *qs, __m512 scale, float *sc, int n, __mmask16 keep) {
	const int ng = d / g;
	__m512 res[8], acc[8];
#pragma GCC unroll 8
	for (int h = 0; h < nh; h++) res[h] = _mm512_setzero_ps();
	for (int gg = 0; gg < ng; gg++) {
#pragma GCC unroll 8
		for (int h = 0; h < nh; h++) acc[h] = _mm512_setzero_ps();
		for (int c = gg * g; c < (gg + 1) * g; c++) {
			const __m512 x = _mm512_loadu_ps(col + (size_t)c * 16);
#pragma GCC unroll 8
			for (int h = 0; h < nh; h++) acc[h] = _mm512_fmadd_ps(_mm512_set1_ps(q[(size_t)h * d + c]), x, acc[h]);
		}
		const __m512 s = _mm512_loadu_ps(sv + 16 * gg), b = _mm512_loadu_ps(bv + 16 * gg);
#pragma GCC unroll 8
		for (int h = 0; h < nh; h++)
			res[h] = _mm512_fmadd_ps(s, acc[h], _mm512_fmadd_ps(b, _mm512_set1_ps(qs[(size_t)h * ng + gg]), res[h]));
	}
#pragma GCC unroll 8
	for (int h = 0; h < nh; h++) _mm512_mask_storeu_ps(sc + (size_t)h * n, keep, _mm512_mul_ps(res[h], scale));
}

// scores_t is scores_d for 4 or more heads per kv head: 16 rows at a time
// with the codes transposed (codes_tile), so each head's 16 scores come out
// of its accumulators side by side with no reduction across lanes (the
// reduction costs as much as the dot products at d = 64), and heads go 8
// at a time, which keeps the FMA chains independent.
ATI void scores_t(const float *q, int rep, const int d, int n, const int g, const int bits, float scale,
                  const uint32_t *kp, const float *ks, const float *kb, float *blk, float *sc) {
	const int ng = d / g, nw = d * bits / 32;
	float *col = blk, *sv = blk + 16 * d, *bv = sv + 16 * ng, *qs = bv + 16 * ng;
	for (int h = 0; h < rep; h++)
		for (int gg = 0; gg < ng; gg++) {
			float t = 0;
			for (int c = gg * g; c < (gg + 1) * g; c++) t += q[(size_t)h * d + c];
			qs[h * ng + gg] = t;
		}
	const __m512 scv = _mm512_set1_ps(scale);
	for (int j0 = 0; j0 < n; j0 += 16) {
		const int nj = n - j0 < 16 ? n - j0 : 16;
		codes_tile(kp + (size_t)j0 * nw, nj, d, bits, col);
		for (int gg = 0; gg < ng; gg++)
			for (int j = 0; j < 16; j++) {
				const size_t at = (size_t)(j0 + (j < nj ? j : nj - 1)) * ng + gg;
				sv[16 * gg + j] = ks[at];
				bv[16 * gg + j] = kb[at];
			}
		const __mmask16 keep = (__mmask16)((1u << nj) - 1);
		int h0 = 0;
		for (; h0 + 8 <= rep; h0 += 8) heads_tile(q + (size_t)h0 * d, 8, d, g, col, sv, bv, qs + h0 * ng, scv, sc + (size_t)h0 * n + j0, n, keep);
		switch (rep - h0) {
		case 7: heads_tile(q + (size_t)h0 * d, 7, d, g, col, sv, bv, qs + h0 * ng, scv, sc + (size_t)h0 * n + j0, n, keep); break;
		case 6: heads_tile(q + (size_t)h0 * d, 6, d, g, col, sv, bv, qs + h0 * ng, scv, sc + (size_t)h0 * n + j0, n, keep); break;
		case 5: heads_tile(q + (size_t)h0 * d, 5, d, g, col, sv, bv, qs + h0 * ng, scv, sc + (size_t)h0 * n + j0, n, keep); break;
		case 4: heads_tile(q + (size_t)h0 * d, 4, d, g, col, sv, bv, qs + h0 * ng, scv, sc + (size_t)h0 * n + j0, n, keep); break;
		case 3: heads_tile(q + (size_t)h0 * d, 3, d, g, col, sv, bv, qs + h0 * ng, scv, sc + (size_t)h0 * n + j0, n, keep); break;
		case 2: heads_tile(q + (size_t)h0 * d, 2, d, g, col, sv, bv, qs + h0 * ng, scv, sc + (size_t)h0 * n + j0, n, keep); break;
		case 1: heads_tile(q + (size_t)h0 * d, 1, d, g, col, sv, bv, qs + h0 * ng, scv, sc + (size_t)h0 * n + j0, n, keep); break;
		}
	}
}

// The int8 scores (hark_qattn_scores_vnni): q·k with AVX-512 VNNI, as
// llama.cpp does for q8_0. Each head's q is quantized once per call, per
// group of the cache, to int8 (qd: step max|q|/127, round to nearest), and
// VPDPBUSD multiplies the stored codes (unsigned bytes, or nibbles split
// into two byte planes) by those int8 values, four per lane, exactly in
// int32. Per group, with Δ = q - qd·qi the rounding of q and mid the
// middle of the codes' range (128 or 8),
//   q·(s∘c + b) = s·(qd·Σ qi·c + mid·ΣΔ) + b·Σq + s·ΣΔ·(c - mid),
// and the kernel drops only the last term: a score is off by at most
// scale · Σ_groups |s|·(qd/2)·Σ|c - mid|, half a step of q times the
// codes' distance from the middle of their range (the test derives its
// tolerance from this). Σq and ΣΔ are taken in float from q as given.

#define ATV __attribute__((target("avx512f,avx512bw,avx512vnni,fma"), always_inline)) static inline

int hark_qattn_vnni_ok(void) {
	static volatile int cached = -1;
	if (cached < 0) {
		__builtin_cpu_init();
		cached = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		         __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("fma");
	}
	return cached;
}

// quantize_q sets, for each of rep heads and ng groups of g, qi (int8,
// stored as dwords of 4 in the order the code planes take them: bytes
// 4u..4u+3 of the row for 8 bits; for 4 bits unit 2m+k holds elements
// 8m+k, 8m+2+k, 8m+4+k, 8m+6+k, the low (k = 0) or high nibbles of code
// word m), and per head and group the float step qd, mid·ΣΔ·scale and
// Σq·scale (scale folded in).
static void quantize_q(const float *q, int rep, int d, int g, int bits, float scale, int8_t *qi, float *qd, float *cmid,
                       float *qs) {
	const int ng = d / g;
	for (int h = 0; h < rep; h++) {
		const float *qh = q + (size_t)h * d;
		int8_t *qih = qi + (size_t)h * d;
		for (int gg = 0; gg < ng; gg++) {
			float amax = 0, sum = 0;
			for (int i = gg * g; i < (gg + 1) * g; i++) {
				amax = fmaxf(amax, fabsf(qh[i]));
				sum += qh[i];
			}
			// A NaN or Inf in q makes sum, and so the group's scores, not
			// finite, which the softmax then decides as for float q.
			const float step = amax / 127, inv = amax > 0 && isfinite(amax) ? 127 / amax : 0;
			float delta = 0;
			for (int i = gg * g; i < (gg + 1) * g; i++) {
				const float r = nearbyintf(qh[i] * inv);
				int at = i;
				if (bits == 4) {
					// element i = 8m + 2b + k goes to unit 2m+k, byte b
					const int m = i / 8, b = (i % 8) / 2, k = i % 2;
					at = 4 * (2 * m + k) + b;
				}
				qih[at] = (int8_t)r;
				delta += qh[i] - step * r;
			}
			const size_t o = (size_t)h * ng + gg;
			qd[o] = step * scale;
			cmid[o] = (bits == 8 ? 128 : 8) * delta * scale;
			qs[o] = sum * scale;
		}
	}
}

// codes_planes writes the codes of 16 rows (rows past nj repeat row nj-1)
// transposed: plane u (16 dwords) holds unit u of each row, 4 byte codes
// side by side (8 bits: word u; 4 bits: word u/2's low nibbles for even
// u, its high ones for odd u, each widened to a byte).
ATV void codes_planes(const uint32_t *codes, int nj, const int d, const int bits, __m512i *pl) {
	const int nw = d * bits / 32;
	const __m512i lo = _mm512_set1_epi32(0x0F0F0F0F);
	for (int w0 = 0; w0 < nw; w0 += 16) {
		const int wc = nw - w0 < 16 ? nw - w0 : 16;
		const __mmask16 mk = (__mmask16)((1u << wc) - 1);
		__m512i r[16];
#pragma GCC unroll 16
		for (int j = 0; j < 16; j++) r[j] = _mm512_maskz_loadu_epi32(mk, codes + (size_t)(j < nj ? j : nj - 1) * nw + w0);
		transpose16(r);
		for (int m = 0; m < wc; m++) {
			if (bits == 8) {
				_mm512_store_si512(pl + w0 + m, r[m]);
			} else {
				_mm512_store_si512(pl + 2 * (w0 + m), _mm512_and_si512(r[m], lo));
				_mm512_store_si512(pl + 2 * (w0 + m) + 1, _mm512_and_si512(_mm512_srli_epi32(r[m], 4), lo));
			}
		}
	}
}

// heads_vnni sets the scores of 16 rows for nh heads from their planes.
ATV void heads_vnni(const int32_t *qi, const int nh, const int d, const int g, const __m512i *pl, const float *sv,
                    const float *bv, const float *qd, const float *cmid, const float *qs, float *sc, int n,
                    __mmask16 keep) {
	const int ng = d / g, nu = d / 4, gu = g / 4;
	__m512 res[8];
	__m512i acc[8];
#pragma GCC unroll 8
	for (int h = 0; h < nh; h++) res[h] = _mm512_setzero_ps();
	for (int gg = 0; gg < ng; gg++) {
#pragma GCC unroll 8
		for (int h = 0; h < nh; h++) acc[h] = _mm512_setzero_si512();
#pragma GCC unroll 8
		for (int u = gg * gu; u < (gg + 1) * gu; u++) {
			const __m512i x = _mm512_load_si512(pl + u);
#pragma GCC unroll 8
			for (int h = 0; h < nh; h++) acc[h] = _mm512_dpbusd_epi32(acc[h], x, _mm512_set1_epi32(qi[(size_t)h * nu + u]));
		}
		const __m512 s = _mm512_loadu_ps(sv + 16 * gg), b = _mm512_loadu_ps(bv + 16 * gg);
#pragma GCC unroll 8
		for (int h = 0; h < nh; h++) {
			const size_t o = (size_t)h * ng + gg;
			const __m512 dot = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[h]), _mm512_set1_ps(qd[o]), _mm512_set1_ps(cmid[o]));
			res[h] = _mm512_fmadd_ps(s, dot, _mm512_fmadd_ps(b, _mm512_set1_ps(qs[o]), res[h]));
		}
	}
#pragma GCC unroll 8
	for (int h = 0; h < nh; h++) _mm512_mask_storeu_ps(sc + (size_t)h * n, keep, res[h]);
}

// kahead is how many rows ahead of the one it reads scores_vnni fetches.
enum { kahead = 128 };

ATV void scores_vnni(const float *q, int rep, const int d, int n, const int g, const int bits, float scale,
                     const uint32_t *kp, const float *ks, const float *kb, float *blk, float *sc, const void *pf,
                     long pfbytes, int more) {
	// pf's bytes (the values the caller reads next) are fetched a share
	// per step, so they arrive while the scores are computed. Both
	// fetches go to L2, not L1: a part's values (64 KB at 8 bits) do not
	// fit in L1, and fetched there they pushed out the keys fetched for
	// the next rows (an 8-bit part took 15% longer, interleaved).
	const long pfstep = ((pfbytes + (n + 15) / 16 - 1) / ((n + 15) / 16) + 63) & ~63L;
	long pfat = 0;
	const int ng = d / g, nw = d * bits / 32, nu = d / 4;
	// blk: d/4 planes of 64 bytes (aligned), 16 scales and biases per
	// group, then the heads' int8 q (d bytes each) and 3 floats per head
	// and group.
	__m512i *pl = (__m512i *)(((uintptr_t)blk + 63) & ~(uintptr_t)63);
	float *sv = (float *)(pl + nu), *bv = sv + 16 * ng, *qd = bv + 16 * ng, *cmid = qd + rep * ng, *qs = cmid + rep * ng;
	int32_t *qi = (int32_t *)(qs + rep * ng);
	{
		// The first kahead rows, which the loop's fetches never ask for,
		// all at once: a long context is split into parts of 1,024 rows or
		// fewer (quant_decode_split.go), and the hardware's prefetch alone
		// left each part's first rows waiting on memory. 0.5B model at
		// 4,096 positions, same process alternating token by token: 8-bit
		// cache 60.4 -> 62.9 and 53.9 -> 56.5 tok/s, 4-bit 58.1 -> 59.5.
		const size_t r = (size_t)(n < kahead ? n : kahead);
		for (size_t at = 0; at < r * nw * 4; at += 64) _mm_prefetch((const char *)kp + at, _MM_HINT_T1);
		for (size_t at = 0; at < r * ng * 4; at += 64) {
			_mm_prefetch((const char *)ks + at, _MM_HINT_T1);
			_mm_prefetch((const char *)kb + at, _MM_HINT_T1);
		}
	}
	quantize_q(q, rep, d, g, bits, scale, (int8_t *)qi, qd, cmid, qs);
	// With more (the caller's next part of a split context starts at row
	// n, quant_decode_split.go), the fetches run on past the end into
	// that part's first rows. Same process at 4,096 positions: 8-bit
	// cache 56.5 -> 58.1 and 54.6 -> 56.3 tok/s, 4-bit 58.1 -> 59.3.
	const int fend = more ? n + kahead : n;
	for (int j0 = 0; j0 < n; j0 += 16) {
		const int nj = n - j0 < 16 ? n - j0 : 16;
		if (j0 + kahead < fend) {
			// Rows kahead on: with the hardware's prefetch alone this
			// loop waits on memory at a long context, when the codes of
			// 24 layers no longer fit in the last-level cache.
			const int m = fend - j0 - kahead < 16 ? fend - j0 - kahead : 16;
			const char *c = (const char *)(kp + (size_t)(j0 + kahead) * nw);
			for (size_t at = 0; at < (size_t)m * nw * 4; at += 64) _mm_prefetch(c + at, _MM_HINT_T1);
			_mm_prefetch((const char *)(ks + (size_t)(j0 + kahead) * ng), _MM_HINT_T1);
			_mm_prefetch((const char *)(kb + (size_t)(j0 + kahead) * ng), _MM_HINT_T1);
		}
		for (const long e = pfat + pfstep; pfat < e && pfat < pfbytes; pfat += 64) _mm_prefetch((const char *)pf + pfat, _MM_HINT_T1);
		codes_planes(kp + (size_t)j0 * nw, nj, d, bits, pl);
		// One group per row: the 16 rows' scales and biases already sit
		// side by side in the cache.
		const float *svr = ks + j0, *bvr = kb + j0;
		if (ng > 1 || nj < 16) {
			svr = sv, bvr = bv;
			for (int gg = 0; gg < ng; gg++)
				for (int j = 0; j < 16; j++) {
					const size_t at = (size_t)(j0 + (j < nj ? j : nj - 1)) * ng + gg;
					sv[16 * gg + j] = ks[at];
					bv[16 * gg + j] = kb[at];
				}
		}
		const __mmask16 keep = (__mmask16)((1u << nj) - 1);
		int h0 = 0;
#define HV(nh) heads_vnni(qi + (size_t)h0 * nu, nh, d, g, pl, svr, bvr, qd + h0 * ng, cmid + h0 * ng, qs + h0 * ng, sc + (size_t)h0 * n + j0, n, keep)
		for (; h0 + 8 <= rep; h0 += 8) HV(8);
		switch (rep - h0) {
		case 7: HV(7); break;
		case 6: HV(6); break;
		case 5: HV(5); break;
		case 4: HV(4); break;
		case 3: HV(3); break;
		case 2: HV(2); break;
		case 1: HV(1); break;
		}
#undef HV
	}
}

// hark_qattn_scores_vnni is hark_qattn_scores512 with int8 q (above), for
// head sizes that are a multiple of 16; blk holds qvnniScratch floats. It
// fetches pf's pfbytes while it runs, and with more the key rows past n.
__attribute__((target("avx512f,avx512bw,avx512vnni,fma"))) void hark_qattn_scores_vnni(
	const float *q, int rep, int d, int n, int g, int bits, float scale, const uint32_t *kp, const float *ks,
	const float *kb, float *blk, float *sc, const void *pf, long pfbytes, int more) {
#define SV(D, G, B) scores_vnni(q, rep, D, n, G, B, scale, kp, ks, kb, blk, sc, pf, pfbytes, more)
	QATTN_SHAPES(d, g, bits, SV);
#undef SV
}

AT void hark_qattn_scores512(const float *q, int rep, int d, int n, int g, int bits, float scale, const uint32_t *kp,
                             const float *ks, const float *kb, float *blk, float *sc) {
	if (rep >= 4) {
		// Enough heads per kv head to keep the FMA chains of scores_t busy.
#define ST(D, G, B) scores_t(q, rep, D, n, G, B, scale, kp, ks, kb, blk, sc)
		QATTN_SHAPES(d, g, bits, ST);
#undef ST
		return;
	}
	if (d == 64) scores_d(q, rep, 64, n, g, bits, scale, kp, ks, kb, blk, sc);
	else if (d == 128) scores_d(q, rep, 128, n, g, bits, scale, kp, ks, kb, blk, sc);
	else scores_d(q, rep, d, n, g, bits, scale, kp, ks, kb, blk, sc);
}

// values_acc adds sum_j p[h*n + j] * v[j] (nj rows) to o[h] for nh heads.
ATI void values_acc(const float *p, int n, const float *v, int nj, const int d, const int nh, float *o) {
	const int nc = d / 16;
	__m512 acc[28];
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

// HEAD_PASSES runs CALL(h0, nh) over heads [0, rep) in the fewest passes
// of at most 28/nc heads (their accumulators and the loads within
// AVX-512's 32 registers), as even as the count allows (4 heads of 128
// as 2 + 2, not 3 + 1), with nh a constant up to 7 so that each pass's
// loops unroll. A 0.5B model's 7 heads of 64 then take one pass over each
// block's values instead of 4 + 3: 4-11% less time for its 8- and 4-bit
// caches without VNNI (same run, modes alternating), head sizes of 128
// within 3% either way. Each head sums in the same order, so results are unchanged.
// The nc guards only tell the compiler what nh <= 28/nc already ensures
// (heads of at most 256: q512), so no accumulator index can pass 28.
#define HEAD_PASSES(rep, nc, CALL)                                                        \
	do {                                                                                  \
		const int hmax_ = (nc) >= 28 ? 1 : 28 / (nc);                                      \
		int passes_ = ((rep) + hmax_ - 1) / hmax_;                                         \
		for (int h0_ = 0; h0_ < (rep); passes_--) {                                        \
			const int nh_ = ((rep) - h0_ + passes_ - 1) / passes_;                         \
			switch (nh_) {                                                                 \
			case 1: CALL(h0_, 1); break;                                                   \
			case 2: if (2 * (nc) <= 28) CALL(h0_, 2); break;                                \
			case 3: if (3 * (nc) <= 28) CALL(h0_, 3); break;                                \
			case 4: if (4 * (nc) <= 28) CALL(h0_, 4); break;                                \
			case 5: if (5 * (nc) <= 28) CALL(h0_, 5); break;                                \
			case 6: if (6 * (nc) <= 28) CALL(h0_, 6); break;                                \
			case 7: if (7 * (nc) <= 28) CALL(h0_, 7); break;                                \
			default: CALL(h0_, nh_);                                                       \
			}                                                                              \
			h0_ += nh_;                                                                    \
		}                                                                                  \
	} while (0)

ATI void values_d(const float *p, int rep, const int d, int n, int g, int bits, const uint32_t *vp, const float *vs,
                  const float *vb, float *blk, float *o) {
	const int ng = d / g, nw = d * bits / 32, nc = d / 16;
	for (size_t i = 0; i < (size_t)rep * d; i++) o[i] = 0;
	for (int jb = 0; jb < n; jb += qblock) {
		const int nj = n - jb < qblock ? n - jb : qblock;
		dequant_block(blk, vp + (size_t)jb * nw, vs + (size_t)jb * ng, vb + (size_t)jb * ng, nj, d, g, bits);
#define VA(h0, nh) values_acc(p + (size_t)(h0) * n + jb, n, blk, nj, d, nh, o + (size_t)(h0) * d)
		HEAD_PASSES(rep, nc, VA);
#undef VA
	}
}

// vcodes_block writes rows [0, nj) of value codes as floats without their
// scales and biases (values_t applies them to the probabilities instead).
// 4-bit rows come out permuted: each 16 bytes give their 16 low nibbles
// (values 0, 2, .., 30 of those 32) then their 16 high ones, which saves
// the shuffle that would put them back in order in every row; values_t
// undoes it once at the end.
ATI void vcodes_block(float *blk, const uint32_t *codes, int nj, const int d, const int bits) {
	const int nw = d * bits / 32;
	for (int j = 0; j < nj; j++) {
		const uint8_t *c = (const uint8_t *)(codes + (size_t)j * nw);
		float *x = blk + (size_t)j * d;
		if (bits == 8) {
#pragma GCC unroll 8
			for (int i = 0; i < d; i += 16)
				_mm512_storeu_ps(x + i, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(c + i)))));
		} else {
#pragma GCC unroll 4
			for (int t = 0; t < d / 32; t++) {
				const __m512i by = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(c + 16 * t)));
				_mm512_storeu_ps(x + 32 * t, _mm512_cvtepi32_ps(_mm512_and_si512(by, _mm512_set1_epi32(15))));
				_mm512_storeu_ps(x + 32 * t + 16, _mm512_cvtepi32_ps(_mm512_srli_epi32(by, 4)));
			}
		}
	}
}

// vgroup is the group of vector c of a vcodes_block row.
ATI int vgroup(int c, const int g, const int bits) { return bits == 8 ? 16 * c / g : 32 * (c / 2) / g; }

// values_tacc adds sum_j w[hh][group][j] * codes[j] (nj rows of blk) to the
// nh heads' permuted accumulators o.
ATI void values_tacc(const float *w, const float *blk, int nj, const int d, const int g, const int bits, const int nh, float *o) {
	const int nc = d / 16, ng = d / g;
	__m512 acc[28];
	for (int hh = 0; hh < nh; hh++)
		for (int c = 0; c < nc; c++) acc[hh * nc + c] = _mm512_loadu_ps(o + (size_t)hh * d + 16 * c);
	for (int j = 0; j < nj; j++) {
		const float *vr = blk + (size_t)j * d;
#pragma GCC unroll 8
		for (int c = 0; c < nc; c++) {
			const __m512 vv = _mm512_loadu_ps(vr + 16 * c);
			const float *wc = w + (size_t)vgroup(c, g, bits) * qblock + j;
#pragma GCC unroll 16
			for (int hh = 0; hh < nh; hh++)
				acc[hh * nc + c] = _mm512_fmadd_ps(_mm512_set1_ps(wc[(size_t)hh * ng * qblock]), vv, acc[hh * nc + c]);
		}
	}
	for (int hh = 0; hh < nh; hh++)
		for (int c = 0; c < nc; c++) _mm512_storeu_ps(o + (size_t)hh * d + 16 * c, acc[hh * nc + c]);
}

// values_t is values_d with the scales and biases taken out of the rows:
// sum_j p_j (s_j c_j + b_j) = sum_j (p_j s_j) c_j + sum_j p_j b_j per
// group, so a row costs its conversion to float and the FMAs of the heads
// that read it. blk holds qblock rows of d, then rep*ng*qblock weights
// p·s, 2*ng*qblock transposed scales and biases, rep*ng*16 bias sums and
// a row of d.
ATI void values_t(const float *p, int rep, const int d, int n, const int g, const int bits, const uint32_t *vp,
                  const float *vs, const float *vb, float *blk, float *o) {
	const int ng = d / g, nw = d * bits / 32, nc = d / 16;
	float *w = blk + (size_t)qblock * d, *sT = w + (size_t)rep * ng * qblock, *bT = sT + (size_t)ng * qblock;
	float *bsum = bT + (size_t)ng * qblock, *tmp = bsum + (size_t)rep * ng * 16;
	for (size_t i = 0; i < (size_t)rep * d; i++) o[i] = 0;
	for (size_t i = 0; i < (size_t)rep * ng * 16; i++) bsum[i] = 0;
	for (int jb = 0; jb < n; jb += qblock) {
		const int nj = n - jb < qblock ? n - jb : qblock;
		vcodes_block(blk, vp + (size_t)jb * nw, nj, d, bits);
		for (int gg = 0; gg < ng; gg++)
			for (int j = 0; j < nj; j++) {
				sT[gg * qblock + j] = vs[(size_t)(jb + j) * ng + gg];
				bT[gg * qblock + j] = vb[(size_t)(jb + j) * ng + gg];
			}
		for (int h = 0; h < rep; h++)
			for (int gg = 0; gg < ng; gg++) {
				const float *ph = p + (size_t)h * n + jb;
				float *wh = w + ((size_t)h * ng + gg) * qblock;
				__m512 bs = _mm512_loadu_ps(bsum + ((size_t)h * ng + gg) * 16);
				for (int j = 0; j < nj; j += 16) {
					const __mmask16 mk = (__mmask16)(nj - j >= 16 ? 0xFFFF : (1u << (nj - j)) - 1);
					const __m512 pv = _mm512_maskz_loadu_ps(mk, ph + j);
					_mm512_mask_storeu_ps(wh + j, mk, _mm512_mul_ps(pv, _mm512_maskz_loadu_ps(mk, sT + gg * qblock + j)));
					bs = _mm512_fmadd_ps(pv, _mm512_maskz_loadu_ps(mk, bT + gg * qblock + j), bs);
				}
				_mm512_storeu_ps(bsum + ((size_t)h * ng + gg) * 16, bs);
			}
#define VA(h0, nh) values_tacc(w + (size_t)(h0) * ng * qblock, blk, nj, d, g, bits, nh, o + (size_t)(h0) * d)
		HEAD_PASSES(rep, nc, VA);
#undef VA
	}
	for (int h = 0; h < rep; h++) {
		float *oh = o + (size_t)h * d;
		for (int i = 0; i < d; i++) tmp[i] = oh[i];
		for (int i = 0; i < d; i++) {
			// where value i sits in the permuted row (4 bits), and its group
			const int at = bits == 8 ? i : (i & ~31) + 16 * (i & 1) + (i & 31) / 2;
			oh[i] = tmp[at] + _mm512_reduce_add_ps(_mm512_loadu_ps(bsum + ((size_t)h * ng + i / g) * 16));
		}
	}
}

AT void hark_qattn_values512(const float *p, int rep, int dv, int n, int g, int bits, const uint32_t *vp, const float *vs,
                             const float *vb, float *blk, float *o) {
	if (g % 32 == 0 && dv % 32 == 0) {
#define VT(D, G, B) values_t(p, rep, D, n, G, B, vp, vs, vb, blk, o)
		QATTN_SHAPES(dv, g, bits, VT);
#undef VT
		return;
	}
	if (dv == 64) values_d(p, rep, 64, n, g, bits, vp, vs, vb, blk, o);
	else if (dv == 128) values_d(p, rep, 128, n, g, bits, vp, vs, vb, blk, o);
	else values_d(p, rep, dv, n, g, bits, vp, vs, vb, blk, o);
}
