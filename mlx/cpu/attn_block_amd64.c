// Prefill attention's two products on AVX-512, without packing: S =
// scale*Q·Kᵀ (with Kᵀ transposed once per KV head) and O = P·V. Both are
// C = alpha*A·B with A and B row-major, and B's rows are contiguous runs
// of the output's columns, so the micro-kernel broadcasts A from its rows
// and loads B straight from memory. The general GEMM packs both operands
// with scalar loops, which for attention's shapes (k = head_dim 64, or
// n = head_dim) cost several times the arithmetic.

#include <immintrin.h>
#include <stddef.h>

#define AT __attribute__((target("avx512f,fma")))
#define ATI __attribute__((target("avx512f,fma"), always_inline)) static inline

// tile computes rows [0, MR) and columns [j, j+32) (lanes past n masked) of
// C = alpha*A·B over k.
ATI void tile(const int MR, int k, float alpha, const float* a, size_t lda, const float* b, size_t ldb, float* c,
              size_t ldc, __mmask16 m0, __mmask16 m1) {
	__m512 acc[12][2];
#pragma GCC unroll 12
	for (int r = 0; r < MR; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
	for (int p = 0; p < k; p++) {
		const float* br = b + (size_t)p * ldb;
		__m512 b0 = _mm512_maskz_loadu_ps(m0, br), b1 = _mm512_maskz_loadu_ps(m1, br + 16);
#pragma GCC unroll 12
		for (int r = 0; r < MR; r++) {
			__m512 av = _mm512_set1_ps(a[(size_t)r * lda + p]);
			acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
			acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
		}
	}
	__m512 va = _mm512_set1_ps(alpha);
#pragma GCC unroll 12
	for (int r = 0; r < MR; r++) {
		_mm512_mask_storeu_ps(c + (size_t)r * ldc, m0, _mm512_mul_ps(va, acc[r][0]));
		_mm512_mask_storeu_ps(c + (size_t)r * ldc + 16, m1, _mm512_mul_ps(va, acc[r][1]));
	}
}

// rows runs tile over every 32-column strip for MR rows.
ATI void rows(const int MR, int n, int k, float alpha, const float* a, size_t lda, const float* b, size_t ldb,
              float* c, size_t ldc) {
	for (int j = 0; j < n; j += 32) {
		int left = n - j;
		__mmask16 m0 = left >= 16 ? 0xFFFF : (__mmask16)((1u << left) - 1);
		__mmask16 m1 = left >= 32 ? 0xFFFF : left > 16 ? (__mmask16)((1u << (left - 16)) - 1) : 0;
		tile(MR, k, alpha, a, lda, b + j, ldb, c + j, ldc, m0, m1);
	}
}

// hark_attn_gemm sets C [m, n] = alpha*A [m, k]·B [k, n], all row-major
// with row strides lda, ldb, ldc (C is overwritten, never read).
//
// Subnormal inputs and results are taken as zero (MXCSR DAZ and FTZ, for
// this call only): softmax rows of far-apart scores hold probabilities
// below 2^-126, and every FMA touching one takes a microcode assist,
// which made this product 60 times slower on such rows. What is dropped
// is below 2^-126 times a value, far under float32 rounding of the sum.
AT void hark_attn_gemm(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c,
                       int ldc) {
	const unsigned int csr = _mm_getcsr();
	_mm_setcsr(csr | 0x8040); // FTZ | DAZ
	int i = 0;
	for (; i + 12 <= m; i += 12) rows(12, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc);
	switch (m - i) {
	case 11: rows(11, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc); break;
	case 10: rows(10, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc); break;
	case 9: rows(9, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc); break;
	case 8: rows(8, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc); break;
	case 7: rows(7, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc); break;
	case 6: rows(6, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc); break;
	case 5: rows(5, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc); break;
	case 4: rows(4, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc); break;
	case 3: rows(3, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc); break;
	case 2: rows(2, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc); break;
	case 1: rows(1, n, k, alpha, a + (size_t)i * lda, lda, b, ldb, c + (size_t)i * ldc, ldc); break;
	}
	_mm_setcsr(csr);
}

// hark_attn_transpose sets dst [cols, rows] (row stride ldd) to the
// transpose of src [rows, cols] (row stride lds), in 16x16 blocks so both
// sides are read and written a cache line at a time.
void hark_attn_transpose(const float* src, int nrows, int ncols, int lds, float* dst, int ldd) {
	for (int i0 = 0; i0 < nrows; i0 += 16) {
		int i1 = i0 + 16 < nrows ? i0 + 16 : nrows;
		for (int j0 = 0; j0 < ncols; j0 += 16) {
			int j1 = j0 + 16 < ncols ? j0 + 16 : ncols;
			for (int j = j0; j < j1; j++)
				for (int i = i0; i < i1; i++) dst[(size_t)j * ldd + i] = src[(size_t)i * lds + j];
		}
	}
}
