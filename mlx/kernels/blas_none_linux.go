//go:build cgo && linux && noblas

package kernels

// The noblas tag builds the cgo kernels without a system BLAS: Sgemm's
// BLAS share falls to the portable Go kernel. It exists for the
// cross-built linux/arm64 test leg, which runs the NEON kernels under
// emulation and would otherwise need an arm64 OpenBLAS installed beside
// the host's (a multiarch set-up that CI should not depend on). Release
// builds never set it.

const blasName = "none (noblas tag: portable Go)"

func blasSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmGo(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// blasSgemmThreads ignores the thread count: sgemmGo sizes its own split.
func blasSgemmThreads(_ int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmGo(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
