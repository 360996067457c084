//go:build cgo && linux && !noblas

package kernels

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>

// A C shim keeps the Go side free of the header's enum and integer types.
static void hark_blas_sgemm(int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                            const float* b, int ldb, float beta, float* c, int ldc) {
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
	            m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
*/
import "C"

import (
	"runtime"
	"sync"
)

// blasName names the system BLAS linked in for Sgemm's small shapes and
// the reference benchmark.
const blasName = "OpenBLAS"

var (
	blasMu      sync.Mutex
	blasThreads int
)

// setBLASThreads sizes OpenBLAS's thread pool. When Hark's own kernel
// handles the large products, the small ones left to OpenBLAS run on one
// thread: its idle workers busy-wait for a while after each call, which on
// a small machine steals the cores the next Go kernel needs.
func setBLASThreads(n int) {
	blasMu.Lock()
	defer blasMu.Unlock()
	if n != blasThreads {
		C.openblas_set_num_threads(C.int(n))
		blasThreads = n
	}
}

// blasSgemm calls cblas_sgemm (row-major) with GOMAXPROCS threads.
func blasSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	blasSgemmThreads(runtime.GOMAXPROCS(0), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func blasSgemmThreads(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	setBLASThreads(threads)
	C.hark_blas_sgemm(cbool(transA), cbool(transB), C.int(m), C.int(n), C.int(k), C.float(alpha),
		fptr(a), C.int(lda), fptr(b), C.int(ldb), C.float(beta), fptr(c), C.int(ldc))
}
