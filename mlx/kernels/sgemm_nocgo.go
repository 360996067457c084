//go:build !cgo || !(linux || darwin)

package kernels

func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmGo(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func sgemmBackend() string { return "go" }

// SgemmSerial reports false: the portable Sgemm has no single-threaded
// entry (see the cgo build's).
func SgemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	return false
}

// SgemmSerialOK reports false (see SgemmSerial).
func SgemmSerialOK() bool { return false }
