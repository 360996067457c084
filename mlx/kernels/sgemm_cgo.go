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
	if !transA && transB && m <= SgemmRowsMaxM && !forceBLAS {
		sgemmRows(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
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

// SgemmSerial is Sgemm on the calling goroutine alone, for callers that
// already spread independent GEMMs over the threads (attention's heads and
// query blocks): inside such a loop Sgemm's own split would find the pool
// busy and start goroutines for every call. It reports false, doing
// nothing, where this build has no single-threaded kernel; the caller then
// keeps Sgemm. SgemmSerialOK says which, once, before the caller splits.
func SgemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	if !SgemmSerialOK() {
		return false
	}
	if err := checkSgemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		panic(err)
	}
	if m == 0 || n == 0 {
		return true
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return true
	}
	if m >= ownSgemmMinM && n >= ownSgemmMinN && k >= ownSgemmMinK {
		ownSgemmSerial(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return true
	}
	blasSgemmThreads(1, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	return true
}

// SgemmSerialOK reports whether SgemmSerial runs here: with a hand-written
// kernel (small shapes then go to BLAS on one thread, as Sgemm does).
func SgemmSerialOK() bool { return ownSgemmSerial != nil && !forceBLAS }

// ownSgemmSerial is ownSgemm's kernel on the calling goroutine.
var ownSgemmSerial func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
