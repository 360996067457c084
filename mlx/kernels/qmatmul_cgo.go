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
                  int j0, int j1, float* out, int ldo, int force, const int8_t* xd, const float* xsv) {
	hark_qmat q = {w, s, b, cols, gs, bits};
	if (xd) hark_q4i24(xd, xsv, xsum, m, &q, j0, j1, out, ldo);
	else hark_qmm_t(x, xde, xsum, m, &q, j0, j1, out, ldo, force);
}

// qmm_t_prep fills the x-side scratch (group sums; for 4-bit either the
// digits of the integer kernel, when xd is non-null and it applies, or the
// reordered copy when xde is non-null) in one cgo call, then, when j1 > j0,
// runs the kernel over rows [j0, j1) too, so a call that stays on one
// goroutine crosses into C once. It returns whether the digits were
// written (the later qmm_t calls must then pass them).
static int qmm_t_prep(const float* x, float* xde, int chunk, float* xsum, int m,
                      const uint32_t* w, const float* s, const float* b, int cols, int gs, int bits,
                      int j0, int j1, float* out, int ldo, int force, int8_t* xd, float* xsv) {
	hark_group_sums(x, m, cols, gs, xsum);
	if (xd && !(hark_q4i24_ok(cols, gs) && hark_q4i24_prep(x, m, cols, xd, xsv))) xd = NULL;
	if (!xd && xde) hark_deinterleave(x, m, cols, chunk, xde);
	if (j1 > j0) qmm_t(x, xde, xsum, m, w, s, b, cols, gs, bits, j0, j1, out, ldo, force, xd, xsv);
	return xd != NULL;
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
	"sync"
	"unsafe"
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
	if f&C.HARK_CPU_AVX512VNNI != 0 {
		parts = append(parts, "avx512vnni")
	}
	if haveAMX {
		parts = append(parts, "amx") // prefill GEMMs in bf16 tiles (amx.go)
	}
	if haveDPBF16 {
		parts = append(parts, "avx512bf16") // bf16-weight prefill on VDPBF16PS (dpbf16.go)
	}
	if f&C.HARK_CPU_F16C != 0 {
		parts = append(parts, "f16c")
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
	if amxQGemmT(x, m, k, n, q, out) {
		return
	}
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

// qmmInlineBytes: a qmm_t call whose work (weight bytes times rows of x)
// is below twice this stays on the calling goroutine, and larger calls hand
// each goroutine at least this much. Below it, starting and waking a
// goroutine costs about as much CPU as the rows it would take (the k/v
// projections of a small model at decode are ~60 KB).
const qmmInlineBytes = 128 << 10

// qmmScratch recycles the x-side scratch of qmatmulTC (group sums, the
// 4-bit reordered copy, the integer kernel's digits and lane scales, and
// the slack that aligns them). At decode these are a few KB each, allocated on
// every one of hundreds of calls per token; reusing them saves the
// allocation and zeroing and the garbage collections they trigger.
var qmmScratch = sync.Pool{New: func() any { return new([]float32) }}

// cacheLineFloats is a cache line (64 bytes) in float32s.
const cacheLineFloats = 16

// lineAligned is the first index at or after i where s's element starts a
// cache line; s must hold cacheLineFloats-1 more elements past i.
func lineAligned(s []float32, i int) int {
	off := int(uintptr(unsafe.Pointer(&s[i]))%64) / 4
	if off == 0 {
		return i
	}
	return i + cacheLineFloats - off
}

// qmatmulTC runs the C kernels for out = x @ W^T. force 0 takes the best
// kernel, the integer 4-bit one included where it applies; 1 and 2 pick
// float kernels as hark_qmm_t's force does (portable C, no AVX-512); 3 is
// the best float kernel, never the integer one.
func qmatmulTC(x []float32, m, k, n int, q qmat, out []float32, force int) {
	gpr := k / q.groupSize
	need := m * gpr
	// The 4-bit kernels take x reordered (m*k floats) or, for the integer
	// kernel, as digits (m*k*3 bytes) and lane scales (m*k/8 floats).
	digits := q.bits == 4 && force == 0
	if q.bits == 4 {
		need += m * k
	}
	if digits {
		need += (m*k*3+3)/4 + m*k/8 + 1
	}
	// The kernels read x's reordered copy and digits in 64-byte vectors:
	// each starts on a cache line (room for that is in need), or every
	// one of those loads, several per 64 weight bytes, spans two lines,
	// which cost the integer kernel about a sixth of its speed.
	need += 2 * cacheLineFloats
	sp := qmmScratch.Get().(*[]float32)
	if cap(*sp) < need {
		*sp = make([]float32, need)
	}
	scratch := (*sp)[:need]
	xsum := scratch[:m*gpr]
	var xde, xsv *C.float
	var xd *C.int8_t
	chunk := C.int(0)
	at := lineAligned(scratch, m*gpr)
	if q.bits == 4 {
		xde = fptr(scratch[at:])
		chunk = C.hark_q4_chunk()
		if force == 2 {
			chunk = 16
		}
		at = lineAligned(scratch, at+m*k)
	}
	if digits {
		// m*k*3 bytes of digits (k a multiple of 128 when the kernel
		// applies) keep the lane scales after them aligned too.
		xd = (*C.int8_t)(unsafe.Pointer(&scratch[at]))
		xsv = fptr(scratch[at+(m*k*3+3)/4:])
	}
	// Each worker streams its own slice of weight rows, at least
	// qmmInlineBytes of work (and 16 rows) each.
	rowBytes := k*q.bits/8 + 8*gpr
	minRows := max(16, (qmmInlineBytes+rowBytes*m-1)/(rowBytes*m))
	r := qmmRowsPool.Get().(*qmmRows)
	r.x, r.xde, r.xsum, r.out, r.xd, r.xsv = fptr(x), xde, fptr(xsum), fptr(out), xd, xsv
	r.w, r.s, r.b = (*C.uint32_t)(&q.w[0]), fptr(q.scales), fptr(q.biases)
	r.m, r.k, r.gs, r.bits, r.n, r.force, r.chunk = C.int(m), C.int(k), C.int(q.groupSize), C.int(q.bits), C.int(n), C.int(force), chunk
	if n < 2*minRows {
		r.prep(n)
	} else {
		if !r.prep(0) {
			r.xd = nil
		}
		parallelFor(n, 1, minRows, r.run)
	}
	*r = qmmRows{run: r.run} // hold on to no caller memory while pooled
	qmmRowsPool.Put(r)
	qmmScratch.Put(sp)
}

// qmmRows holds one qmatmulTC call's arguments for its C calls. The
// structs are pooled with run bound once, so a call hands parallelFor a
// function without allocating a closure (one per matmul, about a hundred
// per decoded token).
type qmmRows struct {
	x, xde, xsum, s, b, out, xsv    *C.float
	w                               *C.uint32_t
	xd                              *C.int8_t
	m, k, gs, bits, n, force, chunk C.int
	run                             func(lo, hi int)
}

// prep fills the x-side scratch and computes rows [0, j1) (none when j1 is
// 0); false when the integer kernel's digits were not written.
func (r *qmmRows) prep(j1 int) bool {
	return C.qmm_t_prep(r.x, r.xde, r.chunk, r.xsum, r.m, r.w, r.s, r.b, r.k, r.gs, r.bits, 0, C.int(j1), r.out, r.n, r.force, r.xd, r.xsv) != 0
}

func (r *qmmRows) rows(lo, hi int) {
	C.qmm_t(r.x, r.xde, r.xsum, r.m, r.w, r.s, r.b, r.k, r.gs, r.bits, C.int(lo), C.int(hi), r.out, r.n, r.force, r.xd, r.xsv)
}

var qmmRowsPool = sync.Pool{New: func() any {
	r := &qmmRows{}
	r.run = r.rows
	return r
}}

// dequantize expands rows [r0, r1) into out with the C kernels (force 1 =
// portable C).
func dequantize(q qmat, cols, r0, r1 int, out []float32, force int) {
	C.dequant((*C.uint32_t)(&q.w[0]), fptr(q.scales), fptr(q.biases), C.int(cols), C.int(q.groupSize), C.int(q.bits),
		C.int(r0), C.int(r1), fptr(out), C.int(force))
}

// q4i24Applies reports whether 4-bit matmuls of this shape take the
// integer kernel on this CPU.
func q4i24Applies(k, groupSize int) bool { return C.hark_q4i24_ok(C.int(k), C.int(groupSize)) != 0 }

// q4i24Digits runs the integer kernel's preparation of x alone: digits
// (m*k*3 bytes) and lane scales (m*k/8), and false when x is not finite.
func q4i24Digits(x []float32, m, k int) ([]int8, []float32, bool) {
	d, sv := make([]int8, m*k*3), make([]float32, m*k/8)
	ok := C.hark_q4i24_prep(fptr(x), C.int(m), C.int(k), (*C.int8_t)(unsafe.Pointer(&d[0])), fptr(sv)) != 0
	return d, sv, ok
}
