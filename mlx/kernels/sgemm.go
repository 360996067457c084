package kernels

import "fmt"

// SgemmRowsMaxM is the most rows of A for which Sgemm of A @ Bᵀ (a batch
// of rows against a weight) sums every row exactly as it sums that row
// alone: at least the rows of a batched decode step (engine.MaxBatchRows),
// so a row's logits do not depend on which rows share its step. The cgo
// build takes its own kernel there (sgemm_rows.c: BLAS blocks differently
// for different m); the portable one sums each element in k order always.
const SgemmRowsMaxM = 16

// Sgemm computes C = alpha*op(A)*op(B) + beta*C for row-major matrices,
// where op(X) is X^T when the matching trans flag is set. op(A) is [m, k],
// op(B) is [k, n], C is [m, n]; lda/ldb/ldc are row strides in elements.
// It uses GOMAXPROCS threads. Like BLAS, beta == 0 overwrites C without
// reading it (so NaNs in C do not leak through).
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if err := checkSgemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		panic(err)
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// checkSgemm validates shapes and strides; a bad call is a programming
// error in the caller, so Sgemm panics with this message (like slice
// bounds) rather than returning an error the contract has no room for.
func checkSgemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	if m < 0 || n < 0 || k < 0 {
		return fmt.Errorf("kernels: sgemm: negative size m=%d n=%d k=%d", m, n, k)
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	if err := checkMat("A", a, ar, ac, lda); err != nil {
		return err
	}
	if err := checkMat("B", b, br, bc, ldb); err != nil {
		return err
	}
	return checkMat("C", c, m, n, ldc)
}

func checkMat(name string, x []float32, rows, cols, ld int) error {
	if rows == 0 || cols == 0 {
		return nil
	}
	if ld < max(cols, 1) {
		return fmt.Errorf("kernels: sgemm: ld%s=%d < %d columns", name, ld, cols)
	}
	if need := (rows-1)*ld + cols; len(x) < need {
		return fmt.Errorf("kernels: sgemm: %s has %d values, need %d for [%d, %d] ld %d", name, len(x), need, rows, cols, ld)
	}
	return nil
}

// scaleC applies C = beta*C, writing zeros when beta == 0.
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		if beta != 1 {
			for j := range row {
				row[j] *= beta
			}
		}
	}
}
