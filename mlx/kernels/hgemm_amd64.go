//go:build cgo && (linux || darwin)

package kernels

/*
#cgo CFLAGS: -O3
#include <stdint.h>
#include "hmatmul.h"
void hark_hgemm_t_amd64(int i0, int i1, int j0, int j1, int k, const float* a, int lda, const uint16_t* w,
                        int kind, float* c, int ldc, float* pa, float* pb);
*/
import "C"

import "unsafe"

// hgemmT is out = x @ Wᵀ for a 16-bit W [n, k] on the AVX-512 GEMM
// (hgemm_amd64.c), packing W's panels straight from its 16-bit rows; it
// reports false, doing nothing, where Sgemm would not use its own AVX-512
// kernel for this shape (the caller then widens a tile and calls Sgemm).
// The threads split C as sgemmOwn does, so the result is bit for bit
// Sgemm's on the widened W.
func hgemmT(x []float32, m, k, n int, w []uint16, format Half, out []float32) bool {
	if ownSgemm == nil || forceBLAS || m < ownSgemmMinM || n < ownSgemmMinN || k < ownSgemmMinK {
		return false
	}
	kind := C.int(C.HARK_BF16)
	if format == F16 {
		kind = C.HARK_F16
	}
	wp := (*C.uint16_t)(unsafe.Pointer(&w[0]))
	run := func(i0, i1, j0, j1 int) {
		bufs := packPool.Get().(*packBufs)
		defer packPool.Put(bufs)
		C.hark_hgemm_t_amd64(C.int(i0), C.int(i1), C.int(j0), C.int(j1), C.int(k), fptr(x), C.int(k), wp, kind,
			fptr(out), C.int(n), fptr(bufs.a), fptr(bufs.b))
	}
	const mr, nr, minWork = 12, 32, 1 << 18 // as sgemmOwn
	if m >= n {
		parallelFor(m, mr, max(mr, minWork/max(1, n*k)), func(lo, hi int) { run(lo, hi, 0, n) })
	} else {
		parallelFor(n, nr, max(nr, minWork/max(1, m*k)), func(lo, hi int) { run(0, m, lo, hi) })
	}
	return true
}
