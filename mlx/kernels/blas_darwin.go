//go:build cgo && darwin

package kernels

/*
#cgo CFLAGS: -DACCELERATE_NEW_LAPACK
#cgo LDFLAGS: -framework Accelerate
#include <Accelerate/Accelerate.h>

// A C shim keeps the Go side free of the header's enum and integer types.
static void hark_blas_sgemm(int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                            const float* b, int ldb, float beta, float* c, int ldc) {
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
	            m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
*/
import "C"

// blasName names the system BLAS linked in for Sgemm.
const blasName = "Accelerate"

func blasSgemmThreads(_ int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	blasSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// blasSgemm calls Accelerate's cblas_sgemm (row-major); Accelerate manages
// its own threads (and the AMX units on Apple silicon).
func blasSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	C.hark_blas_sgemm(cbool(transA), cbool(transB), C.int(m), C.int(n), C.int(k), C.float(alpha),
		fptr(a), C.int(lda), fptr(b), C.int(ldb), C.float(beta), fptr(c), C.int(ldc))
}
