//go:build cgo

package kernels

/*
#cgo CFLAGS: -O3
#include "hmatmul.h"
*/
import "C"

import "os"

// hmmForce picks the C kernels for tests: 0 the best for this CPU, 1 the
// portable C loops, 2 the best without AVX-512.
var hmmForce = 0

func u16ptr(s []uint16) *C.uint16_t { return (*C.uint16_t)(&s[0]) }

func halfToF32(dst []float32, src []uint16, format Half) {
	if len(src) == 0 {
		return
	}
	C.hark_h2f(u16ptr(src), C.size_t(len(src)), C.int(format), fptr(dst), C.int(hmmForce))
}

// hmatmulSmall streams W once for a batch below hmmGemmMinM, each worker
// taking its own rows (x @ Wᵀ) or column segments (x @ W) of at least
// hmmInlineBytes of weights.
func hmatmulSmall(x []float32, m, k, n int, w []uint16, format Half, transB bool, out []float32) {
	xp, wp, op, kind, force := fptr(x), u16ptr(w), fptr(out), C.int(format), C.int(hmmForce)
	if force == 0 && os.Getenv("HARK_HALF512") == "0" {
		// The AVX2 kernel, so benchmarks can compare the two in one
		// process (read at each call, as HARK_BF16DOT is).
		force = 2
	}
	minRows := max(1, hmmInlineBytes/(2*k))
	if transB {
		parallelFor(n, 1, minRows, func(lo, hi int) {
			C.hark_hmm_t(xp, C.int(m), C.int(k), wp, kind, C.int(lo), C.int(hi), op, C.int(n), force)
		})
		return
	}
	// Column segments a multiple of 64 values keep each worker's reads of
	// a row of W on whole cache lines.
	parallelFor(n, 64, max(64, minRows), func(lo, hi int) {
		C.hark_hmm_n(xp, C.int(m), C.int(k), C.int(n), wp, kind, C.int(lo), C.int(hi), op, C.int(n), force)
	})
}
