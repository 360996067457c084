//go:build cgo

// AVX-512 kernels for 16-bit float weights (x @ Wᵀ) at decode: one row
// of x, or the few rows of a batched decode step (up to HARK_HMM_ROWS),
// each of which is summed exactly as it is alone, two rows sharing each
// widening of W and a tile of W's rows staying in cache while the rows
// pass over it. For one row they are bound by how
// fast a core streams W from memory, and a core streams faster the more
// lines it has in flight, which at a fixed reorder window means the fewer
// instructions it spends per line. So:
//   - each worker reads its rows of W in order, one row at a time, one
//     sequential stream (several rows at once, to share the loads of x,
//     measured 40-50% of a plain read against 65% for one);
//   - four lines per loop step and eight accumulators (two or eight lines
//     measured the same);
//   - bf16 is not widened by a shuffle: a 64-byte load holds pairs
//     (w[2i], w[2i+1]) in its dwords, a 16-bit left shift makes the even
//     values float32 and masking the low halves the odd ones, against x
//     permuted once per call into each 32-value block's 16 even then 16
//     odd values. Per line: one load, a shift, an and and two FMAs;
//   - no software prefetch: the hardware prefetcher keeps up with one
//     stream per core, and prefetches 1-4 KB ahead (T0 or NTA) cost
//     10-25% in BenchmarkHalfDecode.
// In BenchmarkHalfDecode (a 0.5B model's decode matmuls, interleaved on
// the loaded 2-core EPYC test machine) that took bf16 from 64-76% of a
// plain read of the same bytes (hmatmul_amd64.c's AVX2 kernel) to 77-90%
// (CPU per pass 64-68 ms against 75-80), and f16 from 71-79% to 79-82%.
// All products and sums are float32, as in hmatmul_amd64.c. Only the
// target-attributed functions use AVX-512, after hark_cpu_features has
// seen it.

#include <immintrin.h>
#include <string.h>
#include "hmatmul.h"
#include "qmatmul.h"

#define H5_TARGET "avx512f,avx2,fma,f16c"
#define H5_INLINE __attribute__((target(H5_TARGET), always_inline)) static inline
#define H5 __attribute__((target(H5_TARGET)))

// H5_MAXK bounds k for the permuted copy of x on the stack (128 KB, well
// inside the threads' C stacks: 8 MB on glibc Linux, 512 KB for macOS's
// secondary threads); wider rows take the AVX2 kernel.
#define H5_MAXK 32768

H5_INLINE float sum8(__m512 a[8]) {
	__m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])),
	                         _mm512_add_ps(_mm512_add_ps(a[4], a[5]), _mm512_add_ps(a[6], a[7])));
	return _mm512_reduce_add_ps(s);
}

// eo_step adds one 32-value block of bf16 W (at w) times the permuted x
// (at xe) into accumulators e (even values) and o (odd).
H5_INLINE void eo_step(const uint16_t* w, const float* xe, __m512* e, __m512* o) {
	const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
	__m512i v = _mm512_loadu_si512(w);
	*e = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(v, 16)), _mm512_loadu_ps(xe), *e);
	*o = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(v, hi)), _mm512_loadu_ps(xe + 16), *o);
}

// eo_row is one row of bf16 W against the permuted x, which is zero
// beyond k up to a multiple of 32.
H5_INLINE float eo_row(const float* xe, int k, const uint16_t* wr) {
	__m512 a[8];
	for (int t = 0; t < 8; t++) a[t] = _mm512_setzero_ps();
	int p = 0;
	for (; p + 128 <= k; p += 128)
		for (int l = 0; l < 4; l++) eo_step(wr + p + 32 * l, xe + p + 32 * l, &a[2 * l], &a[2 * l + 1]);
	for (; p + 32 <= k; p += 32) eo_step(wr + p, xe + p, &a[0], &a[1]);
	if (p < k) {
		// A zero-padded copy: the padding multiplies 0 by x's 0 padding.
		uint16_t wt[32] = {0};
		memcpy(wt, wr + p, (size_t)(k - p) * sizeof(uint16_t));
		eo_step(wt, xe + p, &a[0], &a[1]);
	}
	return sum8(a);
}

// eo_step2 is eo_step for two rows of x (permuted, at xa and xb) against
// one widening of W's block.
H5_INLINE void eo_step2(const uint16_t* w, const float* xa, const float* xb, __m512* ea, __m512* oa, __m512* eb,
                        __m512* ob) {
	const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
	__m512i v = _mm512_loadu_si512(w);
	const __m512 we = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)), wo = _mm512_castsi512_ps(_mm512_and_si512(v, hi));
	*ea = _mm512_fmadd_ps(we, _mm512_loadu_ps(xa), *ea);
	*oa = _mm512_fmadd_ps(wo, _mm512_loadu_ps(xa + 16), *oa);
	*eb = _mm512_fmadd_ps(we, _mm512_loadu_ps(xb), *eb);
	*ob = _mm512_fmadd_ps(wo, _mm512_loadu_ps(xb + 16), *ob);
}

// eo_row2 is eo_row for two rows of x at once, each row through exactly
// eo_row's operations (so each gets what it gets alone), W widened once.
H5_INLINE void eo_row2(const float* xa, const float* xb, int k, const uint16_t* wr, float* outa, float* outb) {
	__m512 a[8], b[8];
	for (int t = 0; t < 8; t++) a[t] = b[t] = _mm512_setzero_ps();
	int p = 0;
	for (; p + 128 <= k; p += 128)
		for (int l = 0; l < 4; l++)
			eo_step2(wr + p + 32 * l, xa + p + 32 * l, xb + p + 32 * l, &a[2 * l], &a[2 * l + 1], &b[2 * l],
			         &b[2 * l + 1]);
	for (; p + 32 <= k; p += 32) eo_step2(wr + p, xa + p, xb + p, &a[0], &a[1], &b[0], &b[1]);
	if (p < k) {
		uint16_t wt[32] = {0};
		memcpy(wt, wr + p, (size_t)(k - p) * sizeof(uint16_t));
		eo_step2(wt, xa + p, xb + p, &a[0], &a[1], &b[0], &b[1]);
	}
	*outa = sum8(a);
	*outb = sum8(b);
}

// eo_permute writes x [k] into xe as eo_row reads it: each 32-value block
// as its 16 even then its 16 odd values, zero past k up to a multiple of
// 32.
H5_INLINE void eo_permute(const float* x, int k, float* xe) {
	const int kp = (k + 31) & ~31, k32 = k & ~31;
	const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
	for (int b = 0; b < k32; b += 32) {
		__m512 lo = _mm512_loadu_ps(x + b), hi = _mm512_loadu_ps(x + b + 16);
		_mm512_store_ps(xe + b, _mm512_permutex2var_ps(lo, ev, hi));
		_mm512_store_ps(xe + b + 16, _mm512_permutex2var_ps(lo, od, hi));
	}
	for (int b = k32; b < kp; b += 32)
		for (int i = 0; i < 16; i++) {
			int e = b + 2 * i;
			xe[b + i] = e < k ? x[e] : 0;
			xe[b + 16 + i] = e + 1 < k ? x[e + 1] : 0;
		}
}

// H5_TILE is how many rows of W a batch of rows of x takes in turn: the
// tile stays in L1 or L2 while each row of x passes over it, so W is read
// from memory once per call.
#define H5_TILE 8

// mm_bf16 is m rows of x against W rows [j0, j1), each row exactly as
// eo_row computes it for that row alone (x is permuted once per call for
// one row, per tile for more; the permutation moves values, it rounds
// none).
H5 static int mm_bf16(const float* x, int m, int k, const uint16_t* w, int j0, int j1, float* out, int ldo) {
	float xe[H5_MAXK] __attribute__((aligned(64)));
	// A scalar permutation loop would be, by instruction count, a few
	// percent of a chunk at k = 4864: not measurable apart on the loaded
	// machine; the vector one is cheaper still.
	if (m == 1) {
		eo_permute(x, k, xe);
		for (int j = j0; j < j1; j++) out[j] = eo_row(xe, k, w + (size_t)j * k);
		return 1;
	}
	// Rows of x in pairs, each in its half of xe, while both fit.
	const int kp = (k + 31) & ~31, pairs = 2 * kp <= H5_MAXK;
	for (int t0 = j0; t0 < j1; t0 += H5_TILE) {
		const int t1 = j1 - t0 < H5_TILE ? j1 : t0 + H5_TILE;
		for (int i = 0; i < m;) {
			if (pairs && i + 1 < m) {
				eo_permute(x + (size_t)i * k, k, xe);
				eo_permute(x + (size_t)(i + 1) * k, k, xe + kp);
				for (int j = t0; j < t1; j++)
					eo_row2(xe, xe + kp, k, w + (size_t)j * k, out + (size_t)i * ldo + j, out + (size_t)(i + 1) * ldo + j);
				i += 2;
				continue;
			}
			eo_permute(x + (size_t)i * k, k, xe);
			for (int j = t0; j < t1; j++) out[(size_t)i * ldo + j] = eo_row(xe, k, w + (size_t)j * k);
			i++;
		}
	}
	return 1;
}

// f16_row is one row of f16 W against x, sixteen values per vcvtph2ps.
H5_INLINE float f16_row(const float* x, int k, const uint16_t* wr) {
	__m512 a[8];
	for (int t = 0; t < 8; t++) a[t] = _mm512_setzero_ps();
	int p = 0;
	for (; p + 128 <= k; p += 128)
		for (int l = 0; l < 8; l++)
			a[l] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(wr + p + 16 * l))),
			                       _mm512_loadu_ps(x + p + 16 * l), a[l]);
	for (; p + 16 <= k; p += 16)
		a[0] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(wr + p))), _mm512_loadu_ps(x + p),
		                       a[0]);
	if (p < k) {
		uint16_t wt[16] = {0};
		float xt[16] = {0};
		memcpy(wt, wr + p, (size_t)(k - p) * sizeof(uint16_t));
		memcpy(xt, x + p, (size_t)(k - p) * sizeof(float));
		a[1] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)wt)), _mm512_loadu_ps(xt), a[1]);
	}
	return sum8(a);
}

// f16_row2 is f16_row for two rows of x at once, each row through
// exactly f16_row's operations, each vector of W widened once.
H5_INLINE void f16_row2(const float* xa, const float* xb, int k, const uint16_t* wr, float* outa, float* outb) {
	__m512 a[8], b[8];
	for (int t = 0; t < 8; t++) a[t] = b[t] = _mm512_setzero_ps();
	int p = 0;
	for (; p + 128 <= k; p += 128)
		for (int l = 0; l < 8; l++) {
			const __m512 wv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(wr + p + 16 * l)));
			a[l] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(xa + p + 16 * l), a[l]);
			b[l] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(xb + p + 16 * l), b[l]);
		}
	for (; p + 16 <= k; p += 16) {
		const __m512 wv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(wr + p)));
		a[0] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(xa + p), a[0]);
		b[0] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(xb + p), b[0]);
	}
	if (p < k) {
		uint16_t wt[16] = {0};
		float xt[16] = {0}, yt[16] = {0};
		memcpy(wt, wr + p, (size_t)(k - p) * sizeof(uint16_t));
		memcpy(xt, xa + p, (size_t)(k - p) * sizeof(float));
		memcpy(yt, xb + p, (size_t)(k - p) * sizeof(float));
		const __m512 wv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)wt));
		a[1] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(xt), a[1]);
		b[1] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(yt), b[1]);
	}
	*outa = sum8(a);
	*outb = sum8(b);
}

// mm_f16 is m rows of x against W rows [j0, j1), in pairs, each row
// exactly as f16_row computes it for that row alone.
H5 static void mm_f16(const float* x, int m, int k, const uint16_t* w, int j0, int j1, float* out, int ldo) {
	for (int t0 = j0; t0 < j1; t0 += H5_TILE) {
		const int t1 = j1 - t0 < H5_TILE ? j1 : t0 + H5_TILE;
		int i = 0;
		for (; i + 1 < m; i += 2)
			for (int j = t0; j < t1; j++)
				f16_row2(x + (size_t)i * k, x + (size_t)(i + 1) * k, k, w + (size_t)j * k, out + (size_t)i * ldo + j,
				         out + (size_t)(i + 1) * ldo + j);
		if (i < m)
			for (int j = t0; j < t1; j++) out[(size_t)i * ldo + j] = f16_row(x + (size_t)i * k, k, w + (size_t)j * k);
	}
}

// hark_hmm_t_512 takes batches of up to HARK_HMM_ROWS rows of x (decode,
// batched decode), every row summed as it is alone, so a row's results
// never depend on the batch; larger batches go to the AVX2 kernel, which
// widens W once per row pair.
int hark_hmm_t_512(const float* x, int m, int k, const uint16_t* w, int kind, int j0, int j1, float* out, int ldo) {
	int f = hark_cpu_features();
	if (m < 1 || m > HARK_HMM_ROWS || !(f & HARK_CPU_AVX512F) || !(f & HARK_CPU_AVX2_FMA) || !(f & HARK_CPU_F16C))
		return 0;
	if (kind == HARK_BF16) {
		if (k > H5_MAXK) return 0;
		return mm_bf16(x, m, k, w, j0, j1, out, ldo);
	}
	mm_f16(x, m, k, w, j0, j1, out, ldo);
	return 1;
}
