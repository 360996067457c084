//go:build cgo

package kernels

/*
#include <stdint.h>
int hark_qgemm_t_ok(int k, int gs, int bits);
void hark_qgemm_t_amd64(int i0, int i1, int j0, int j1, int k, const float* a, int lda, const uint32_t* w,
                        const float* sc, const float* bi, const uint8_t* pq, int gs, int bits, float* c, int ldc,
                        float* pa, float* pb);
*/
import "C"

import "unsafe"

// qgemmT computes out = x @ W^T for W quantized [n, k] with the AVX-512
// GEMM whose B packing dequantizes W directly (hark_qgemm_t_amd64), and
// reports false, doing nothing, where that kernel does not apply (no
// AVX-512, or a format with values split across words).
func qgemmT(x []float32, m, k, n int, q qmat, out []float32) bool {
	if !haveAVX512 || C.hark_qgemm_t_ok(C.int(k), C.int(q.groupSize), C.int(q.bits)) == 0 {
		return false
	}
	w, s, b := (*C.uint32_t)(&q.w[0]), fptr(q.scales), fptr(q.biases)
	qgemmRun(x, m, k, n, func(i0, i1, j0, j1 int, pa, pb *C.float) {
		C.hark_qgemm_t_amd64(C.int(i0), C.int(i1), C.int(j0), C.int(j1), C.int(k), fptr(x), C.int(k),
			w, s, b, nil, C.int(q.groupSize), C.int(q.bits), fptr(out), C.int(n), pa, pb)
	})
	return true
}

// qgemmPackedT is qgemmT for a matrix in the packed 4-bit layout (the
// layout decode uses on CPUs with VNNI), so prefill reads those bytes too.
func qgemmPackedT(x []float32, m int, p PackedQ4, out []float32) bool {
	k, n := p.Cols, p.Rows
	if !haveAVX512 || C.hark_qgemm_t_ok(C.int(k), C.int(p.GroupSize), 4) == 0 {
		return false
	}
	pq := (*C.uint8_t)(unsafe.Pointer(&p.Data[0]))
	qgemmRun(x, m, k, n, func(i0, i1, j0, j1 int, pa, pb *C.float) {
		C.hark_qgemm_t_amd64(C.int(i0), C.int(i1), C.int(j0), C.int(j1), C.int(k), fptr(x), C.int(k),
			nil, nil, nil, pq, C.int(p.GroupSize), 4, fptr(out), C.int(n), pa, pb)
	})
	return true
}

// qgemmRun splits out [m, n] into slabs for the workers, as sgemmOwn does:
// along the longer side, each with enough work to amortize its packing.
// Along n each slab dequantizes only its own weight rows; along m every
// slab dequantizes all of W, which pays only when W is small next to x.
// Column slabs start on a multiple of 32 (whole B panels, whole tiles of
// the packed layout).
func qgemmRun(x []float32, m, k, n int, run func(i0, i1, j0, j1 int, pa, pb *C.float)) {
	call := func(i0, i1, j0, j1 int) {
		bufs := packPool.Get().(*packBufs)
		defer packPool.Put(bufs)
		run(i0, i1, j0, j1, fptr(bufs.a), fptr(bufs.b))
	}
	const mr, nr, minWork = 12, 32, 1 << 18
	if m >= 4*n {
		parallelFor(m, mr, max(mr, minWork/max(1, n*k)), func(lo, hi int) { call(lo, hi, 0, n) })
		return
	}
	parallelFor(n, nr, max(nr, minWork/max(1, m*k)), func(lo, hi int) { call(0, m, lo, hi) })
}
