//go:build cgo && (linux || darwin)

package kernels

import (
	"os"
	"runtime"
)

// ownSgemm is the hand-written kernel chosen for this CPU, or nil to use
// the system BLAS for everything (set by the per-architecture pickers).
var (
	ownSgemm     func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	ownSgemmName string
)

// Below these sizes the own kernel wastes most of its register tile (12x32
// with AVX-512) and BLAS's small-matrix paths win.
const ownSgemmMinM, ownSgemmMinN, ownSgemmMinK = 12, 32, 16

// HARK_SGEMM=blas forces the system BLAS (for comparisons and bug hunts).
var forceBLAS = os.Getenv("HARK_SGEMM") == "blas"

func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if ownSgemm != nil && !forceBLAS && m >= ownSgemmMinM && n >= ownSgemmMinN && k >= ownSgemmMinK {
		ownSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	threads := runtime.GOMAXPROCS(0)
	if ownSgemm != nil && !forceBLAS {
		threads = 1 // only small shapes reach BLAS; see setBLASThreads
	}
	blasSgemmThreads(threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func sgemmBackend() string {
	if ownSgemm != nil && !forceBLAS {
		return ownSgemmName + " (small shapes: " + blasName + ")"
	}
	return blasName
}
