//go:build cgo

package kernels

/*
#cgo CFLAGS: -O3
#include "qmatmul.h"
int hark_sgemm_pack_a_len(void);
int hark_sgemm_pack_b_len(void);
void hark_sgemm_amd64(int use512, int ta, int tb, int i0, int i1, int j0, int j1, int k, float alpha,
                      const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc, float* pa,
                      float* pb);
*/
import "C"

import "sync"

// haveAVX2 and haveAVX512 report which GEMM micro-kernels can run here.
var (
	haveAVX2   = C.hark_cpu_features()&C.HARK_CPU_AVX2_FMA != 0
	haveAVX512 = C.hark_cpu_features()&C.HARK_CPU_AVX512F != 0
)

// packPool recycles per-thread packing buffers: allocating (and faulting
// in) a few MB on every call would cost more than a small GEMM.
var packPool = sync.Pool{New: func() any {
	return &packBufs{a: make([]float32, int(C.hark_sgemm_pack_a_len())), b: make([]float32, int(C.hark_sgemm_pack_b_len()))}
}}

type packBufs struct{ a, b []float32 }

// sgemmAVX2 and sgemmAVX512 run the hand-written kernels (the caller
// checks haveAVX2 / haveAVX512).
func sgemmAVX2(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmOwn(false, false, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func sgemmAVX512(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmOwn(true, false, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmAVX512Serial is sgemmAVX512 on the calling goroutine.
func sgemmAVX512Serial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmOwn(true, true, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmOwn splits C into slabs along its longer side (aligned to the
// micro-tile) and runs the C kernel on each slab in its own goroutine
// (serial: all of C on the calling goroutine).
func sgemmOwn(use512, serial, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	mr, nr := 6, 16
	if use512 {
		mr, nr = 12, 32
	}
	run := func(i0, i1, j0, j1 int) {
		bufs := packPool.Get().(*packBufs)
		defer packPool.Put(bufs)
		C.hark_sgemm_amd64(cbool(use512), cbool(transA), cbool(transB), C.int(i0), C.int(i1), C.int(j0), C.int(j1), C.int(k),
			C.float(alpha), fptr(a), C.int(lda), fptr(b), C.int(ldb), C.float(beta), fptr(c), C.int(ldc),
			fptr(bufs.a), fptr(bufs.b))
	}
	if serial {
		run(0, m, 0, n)
		return
	}
	// A slab must have enough work to amortize its own packing.
	const minWork = 1 << 18
	if m >= n {
		parallelFor(m, mr, max(mr, minWork/max(1, n*k)), func(lo, hi int) { run(lo, hi, 0, n) })
		return
	}
	parallelFor(n, nr, max(nr, minWork/max(1, m*k)), func(lo, hi int) { run(0, m, lo, hi) })
}
