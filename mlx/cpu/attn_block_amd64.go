//go:build cgo

package cpu

/*
#cgo CFLAGS: -O3
void hark_attn_gemm(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc);
void hark_attn_transpose(const float* src, int nrows, int ncols, int lds, float* dst, int ldd);
*/
import "C"

import "unsafe"

// haveAttnBlock reports whether attnGemm and attnTranspose run here
// (attn_block_amd64.c: AVX-512).
var haveAttnBlock = attn512

// attnGemm sets c [m, n] = alpha * a [m, k] · b [k, n], row-major with row
// strides lda, ldb, ldc, on the calling goroutine.
func attnGemm(m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	_, _, _ = a[(m-1)*lda+k-1], b[(k-1)*ldb+n-1], c[(m-1)*ldc+n-1] // bounds checks the C code cannot do
	C.hark_attn_gemm(C.int(m), C.int(n), C.int(k), C.float(alpha), (*C.float)(unsafe.Pointer(&a[0])), C.int(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.int(ldb), (*C.float)(unsafe.Pointer(&c[0])), C.int(ldc))
}

// attnTranspose sets dst [cols, rows] (row stride ldd) to src [rows, cols]
// (row stride lds) transposed.
func attnTranspose(src []float32, rows, cols, lds int, dst []float32, ldd int) {
	if rows == 0 || cols == 0 {
		return
	}
	_, _ = src[(rows-1)*lds+cols-1], dst[(cols-1)*ldd+rows-1]
	C.hark_attn_transpose((*C.float)(unsafe.Pointer(&src[0])), C.int(rows), C.int(cols), C.int(lds),
		(*C.float)(unsafe.Pointer(&dst[0])), C.int(ldd))
}
