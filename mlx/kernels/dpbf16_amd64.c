//go:build cgo

// bf16 GEMM on AVX-512 BF16 (VDPBF16PS: Zen 4, Cooper Lake, Sapphire
// Rapids without AMX) for prefill with bf16 weights: C(f32, M x N) =
// A(bf16, M x K) · Wᵀ, W a bf16 [N, K] matrix read as it is stored. One
// VDPBF16PS multiplies 16 pairs of bf16 and adds both products into 16
// float32 lanes: 64 flops where a float32 FMA does 32, so a bf16 model's
// prefill runs on twice the float32 arithmetic rate, and W is never
// widened. A is the activations rounded to bf16 once per call (as the AMX
// path and llama.cpp's BF16 matmuls do); the products of two bf16 values
// are exact in float32 and every sum is float32.
//
// Structure (Goto/BLIS, as sgemm_amd64.c): A is packed once per call into
// 12-row panels, pair-major (12 32-bit words per pair of k values); each
// worker packs a 32-column panel of W for a block of KCD k values into the
// VNNI layout of amx_amd64.c (16 KB, stays in L1) and runs the 12x32
// register tile over every row panel of A (the A block, M x KCD bf16,
// stays in L2). The tile is 24 zmm accumulators, two panel vectors and
// an embedded broadcast of A's pair: 26 of 32 registers.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DP __attribute__((target("avx512f,avx512bw,avx512bf16")))

#define MRD 12
#define KCD 256

// The VNNI panel packer of amx_amd64.c: for each 32-value step of k, two
// 16x16 tiles of 32-bit words (columns 0-15, then 16-31), word r of lane
// c holding W[j0+c][2r], W[j0+c][2r+1] (low, high).
void hark_pack_bf16_vnni(const uint16_t* w, int k, int pc, int kc, int j0, int nc, uint16_t* pb);

// hark_dpbf16_cpu reports whether this CPU (and OS, for the zmm state)
// runs AVX-512 BF16 with the BW instructions the packers use.
int hark_dpbf16_cpu(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512bf16");
}

// Scratch (bytes) the Go side provides per worker: one W panel.
int hark_dpbf16_pb_bytes(void) { return KCD * 32 * 2; }

// hark_dpbf16_pack_a rounds rows [i0, i1) (i0 a multiple of 12) of x
// (f32 [m, k], row-major) to bf16, nearest even, into 12-row panels at ap:
// panel p holds kp/2 groups of 12 words, word i of group q being row
// 12p+i's values 2q (low half) and 2q+1 (high). Rows at or past m and
// values at or past k are zero. kp is k rounded up to 32.
DP void hark_dpbf16_pack_a(const float* x, int m, int k, int i0, int i1, uint32_t* ap, int kp, uint16_t* row) {
	const int pairs = kp / 2;
	for (int i = i0; i < i1; i++) {
		uint32_t* o = ap + (size_t)(i / MRD) * pairs * MRD + i % MRD;
		if (i >= m) {
			for (int q = 0; q < pairs; q++) o[(size_t)q * MRD] = 0;
			continue;
		}
		const float* r = x + (size_t)i * k;
		for (int p = 0; p < kp; p += 32) {
			int left = k - p;
			__mmask16 m0 = left >= 16 ? 0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
			__mmask16 m1 = left >= 32 ? 0xFFFF : left > 16 ? (__mmask16)((1u << (left - 16)) - 1) : 0;
			__m512 lo = _mm512_maskz_loadu_ps(m0, r + p), hi = _mm512_maskz_loadu_ps(m1, r + p + 16);
			_mm512_storeu_si512(row + p, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
		}
		const uint32_t* w = (const uint32_t*)row;
		for (int q = 0; q < pairs; q++) o[(size_t)q * MRD] = w[q];
	}
}

// tile runs the 12x32 register tile over pairs k-pairs: a is a row
// panel's words from the block's first pair, b the W panel. It stores
// rows [0, mr) of the tile at c (ldc floats per row), columns by masks
// m0 (0-15) and m1 (16-31), replacing C (first) or adding to it.
DP static void tile(int pairs, const uint32_t* a, const uint32_t* b, float* c, size_t ldc, int mr, __mmask16 m0,
                    __mmask16 m1, int first) {
	__m512 acc[MRD][2];
#pragma GCC unroll 12
	for (int i = 0; i < MRD; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
	for (int q = 0; q < pairs; q++) {
		// pair q sits in step q/16, tile row q%16: 512 words per step, the
		// second 16 columns 256 words after the first
		const uint32_t* bq = b + (size_t)(q >> 4) * 512 + (size_t)(q & 15) * 16;
		__m512bh b0 = (__m512bh)_mm512_loadu_si512(bq), b1 = (__m512bh)_mm512_loadu_si512(bq + 256);
#pragma GCC unroll 12
		for (int i = 0; i < MRD; i++) {
			__m512bh av = (__m512bh)_mm512_set1_epi32((int)a[i]);
			acc[i][0] = _mm512_dpbf16_ps(acc[i][0], av, b0);
			acc[i][1] = _mm512_dpbf16_ps(acc[i][1], av, b1);
		}
		a += MRD;
	}
#pragma GCC unroll 12
	for (int i = 0; i < MRD; i++) {
		if (i >= mr) break;
		float* cr = c + (size_t)i * ldc;
		__m512 r0 = acc[i][0], r1 = acc[i][1];
		if (!first) {
			r0 = _mm512_add_ps(r0, _mm512_maskz_loadu_ps(m0, cr));
			r1 = _mm512_add_ps(r1, _mm512_maskz_loadu_ps(m1, cr + 16));
		}
		_mm512_mask_storeu_ps(cr, m0, r0);
		_mm512_mask_storeu_ps(cr + 16, m1, r1);
	}
}

// hark_dpbf16_gemm_t computes columns [j0, j1) (j0 a multiple of 32) of
// C = A·Wᵀ (C [m, n], ldc floats per row) from A packed by
// hark_dpbf16_pack_a (mp rows, mp a multiple of 12; kp values per row)
// and the bf16 W [n, k], with pb (hark_dpbf16_pb_bytes) as scratch.
DP void hark_dpbf16_gemm_t(const uint32_t* ap, int m, int mp, int kp, int k, int n, const uint16_t* w, int j0,
                           int j1, float* c, int ldc, uint16_t* pb) {
	const size_t pairs = (size_t)kp / 2;
	for (int pc = 0; pc < kp; pc += KCD) {
		const int kc = kp - pc < KCD ? kp - pc : KCD;
		for (int jp = j0; jp < j1; jp += 32) {
			const int nc = n - jp < 32 ? n - jp : 32;
			hark_pack_bf16_vnni(w, k, pc, kc, jp, nc, pb);
			const __mmask16 m0 = nc >= 16 ? 0xFFFF : (__mmask16)((1u << nc) - 1);
			const __mmask16 m1 = nc >= 32 ? 0xFFFF : nc > 16 ? (__mmask16)((1u << (nc - 16)) - 1) : 0;
			for (int i = 0; i < mp; i += MRD) {
				const int mr = m - i < MRD ? m - i : MRD;
				const uint32_t* a = ap + (size_t)(i / MRD) * pairs * MRD + (size_t)(pc / 2) * MRD;
				tile(kc / 2, a, (const uint32_t*)pb, c + (size_t)i * ldc + jp, (size_t)ldc, mr, m0, m1, pc == 0);
			}
		}
	}
}
