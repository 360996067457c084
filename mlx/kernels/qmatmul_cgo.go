//go:build cgo

package kernels

/*
#cgo CFLAGS: -O3
#include "qmatmul.h"

// The Go side passes slices as separate pointers (a Go struct holding Go
// pointers may not cross into C); the descriptor is built here on the C
// stack.
static void qmm_t(const float* x, const float* xde, const float* xsum, int m,
                  const uint32_t* w, const float* s, const float* b, int cols, int gs, int bits,
                  int j0, int j1, float* out, int ldo, int force) {
	hark_qmat q = {w, s, b, cols, gs, bits};
	hark_qmm_t(x, xde, xsum, m, &q, j0, j1, out, ldo, force);
}

static void qmm_n(const float* x, int m, int k, const uint32_t* w, const float* s, const float* b,
                  int cols, int gs, int bits, int c0, int c1, float* out, int ldo) {
	hark_qmat q = {w, s, b, cols, gs, bits};
	hark_qmm_n(x, m, k, &q, c0, c1, out, ldo);
}

static void dequant(const uint32_t* w, const float* s, const float* b, int cols, int gs, int bits,
                    int r0, int r1, float* out, int force) {
	hark_qmat q = {w, s, b, cols, gs, bits};
	hark_dequant(&q, r0, r1, out, force);
}
*/
import "C"

import (
	"fmt"
	"strings"
)

// Features reports the detected CPU features and which backend each kernel
// uses, for logs and bug reports.
func Features() string {
	f := int(C.hark_cpu_features())
	var parts []string
	if f&C.HARK_CPU_AVX2_FMA != 0 {
		parts = append(parts, "avx2+fma")
	}
	if f&C.HARK_CPU_AVX512F != 0 {
		parts = append(parts, "avx512f")
	}
	if f&C.HARK_CPU_NEON != 0 {
		parts = append(parts, "neon")
	}
	if len(parts) == 0 {
		parts = append(parts, "baseline")
	}
	return fmt.Sprintf("cpu: %s; sgemm: %s; qmatmul: C", strings.Join(parts, ","), sgemmBackend())
}

func qmatmulT(x []float32, m, k, n int, q qmat, out []float32) {
	if m >= qmmDequantMinM {
		qmatmulDequantT(x, m, k, n, q, out)
		return
	}
	qmatmulTC(x, m, k, n, q, out, 0)
}

func qmatmulN(x []float32, m, k, n int, q qmat, out []float32) {
	if m >= qmmDequantMinM {
		qmatmulDequantN(x, m, k, n, q, out)
		return
	}
	parallelFor(n, q.groupSize, q.groupSize, func(lo, hi int) {
		C.qmm_n(fptr(x), C.int(m), C.int(k), (*C.uint32_t)(&q.w[0]), fptr(q.scales), fptr(q.biases),
			C.int(n), C.int(q.groupSize), C.int(q.bits), C.int(lo), C.int(hi), fptr(out), C.int(n))
	})
}

// qmatmulTC runs the C kernels for out = x @ W^T (force: 0 best, 1
// portable C, 2 no AVX-512; see hark_qmm_t).
func qmatmulTC(x []float32, m, k, n int, q qmat, out []float32, force int) {
	gpr := k / q.groupSize
	xsum := make([]float32, m*gpr)
	C.hark_group_sums(fptr(x), C.int(m), C.int(k), C.int(q.groupSize), fptr(xsum))
	var xde *C.float
	if q.bits == 4 {
		buf := make([]float32, m*k)
		chunk := C.hark_q4_chunk()
		if force == 2 {
			chunk = 16
		}
		C.hark_deinterleave(fptr(x), C.int(m), C.int(k), chunk, fptr(buf))
		xde = fptr(buf)
	}
	// Each worker streams its own slice of weight rows; 16 rows is the
	// smallest slice worth a goroutine.
	parallelFor(n, 1, 16, func(lo, hi int) {
		C.qmm_t(fptr(x), xde, fptr(xsum), C.int(m), (*C.uint32_t)(&q.w[0]), fptr(q.scales), fptr(q.biases),
			C.int(k), C.int(q.groupSize), C.int(q.bits), C.int(lo), C.int(hi), fptr(out), C.int(n), C.int(force))
	})
}

// dequantize expands rows [r0, r1) into out with the C kernels (force 1 =
// portable C).
func dequantize(q qmat, cols, r0, r1 int, out []float32, force int) {
	C.dequant((*C.uint32_t)(&q.w[0]), fptr(q.scales), fptr(q.biases), C.int(cols), C.int(q.groupSize), C.int(q.bits),
		C.int(r0), C.int(r1), fptr(out), C.int(force))
}
