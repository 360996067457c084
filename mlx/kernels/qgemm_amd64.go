//go:build cgo

package kernels

/*
#include <stdint.h>
int hark_qgemm_t_ok(int k, int gs, int bits);
void hark_qgemm_t_amd64(int i0, int i1, int j0, int j1, int k, const float* a, int lda, const uint32_t* w,
                        const float* sc, const float* bi, int gs, int bits, float* c, int ldc, float* pa,
                        float* pb);
*/
import "C"

// qgemmT computes out = x @ W^T for W quantized [n, k] with the AVX-512
// GEMM whose B packing dequantizes W directly (hark_qgemm_t_amd64), and
// reports false, doing nothing, where that kernel does not apply (no
// AVX-512, or a format with values split across words).
func qgemmT(x []float32, m, k, n int, q qmat, out []float32) bool {
	if !haveAVX512 || C.hark_qgemm_t_ok(C.int(k), C.int(q.groupSize), C.int(q.bits)) == 0 {
		return false
	}
	run := func(i0, i1, j0, j1 int) {
		bufs := packPool.Get().(*packBufs)
		defer packPool.Put(bufs)
		C.hark_qgemm_t_amd64(C.int(i0), C.int(i1), C.int(j0), C.int(j1), C.int(k), fptr(x), C.int(k),
			(*C.uint32_t)(&q.w[0]), fptr(q.scales), fptr(q.biases), C.int(q.groupSize), C.int(q.bits),
			fptr(out), C.int(n), fptr(bufs.a), fptr(bufs.b))
	}
	// As sgemmOwn: slabs along the longer side of out, each with enough
	// work to amortize its packing. Along n every slab dequantizes its own
	// weight rows once; along m each slab dequantizes all of W, which
	// only pays when W is small next to x.
	const mr, nr, minWork = 12, 32, 1 << 18
	if m >= 4*n {
		parallelFor(m, mr, max(mr, minWork/max(1, n*k)), func(lo, hi int) { run(lo, hi, 0, n) })
		return true
	}
	parallelFor(n, nr, max(nr, minWork/max(1, m*k)), func(lo, hi int) { run(0, m, lo, hi) })
	return true
}
