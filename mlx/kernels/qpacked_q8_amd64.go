//go:build cgo

package kernels

/*
#cgo CFLAGS: -O3
#include <stdint.h>
int hark_pq8_prep(const float* x, int m, int k, int gs, int8_t* xq, float* xsv, float* xsum);
void hark_pq8(const int8_t* xq, const float* xsv, const float* xsum, int m, const uint8_t* p, int k, int gs,
              int n, int t0, int t1, float* out, int ldo);
*/
import "C"

import (
	"os"
	"sync"
	"unsafe"
)

// pq8Call holds one int8 matmul's arguments for its C calls; pooled with
// its methods bound once, so handing them to parallelFor allocates nothing.
type pq8Call struct {
	x, xsum, xsv, out *C.float
	xq                *C.int8_t
	p                 *C.uint8_t
	m, k, gs, n       C.int
	okRows            []bool // per prep chunk: x held no infinity or NaN
	prep, run         func(lo, hi int)
}

// pq8PrepRows is how many rows of x one prep call quantizes.
const pq8PrepRows = 16

func (c *pq8Call) prepRows(lo, hi int) {
	k, gpr := int(c.k), int(c.k/c.gs)
	xq := (*C.int8_t)(unsafe.Add(unsafe.Pointer(c.xq), 4*lo*k))
	xsv := (*C.float)(unsafe.Add(unsafe.Pointer(c.xsv), 4*lo*k/8))
	xsum := (*C.float)(unsafe.Add(unsafe.Pointer(c.xsum), 4*lo*gpr))
	x := (*C.float)(unsafe.Add(unsafe.Pointer(c.x), 4*lo*k))
	ok := C.hark_pq8_prep(x, C.int(hi-lo), c.k, c.gs, xq, xsv, xsum) != 0
	// parallelFor hands out whole multiples of pq8PrepRows, not always
	// one: mark every chunk this call covered. (Marking only lo's chunk
	// left the others false from m = 256 on, with 2 workers, so every
	// prefill chunk was refused after its prep and redone through Sgemm:
	// the "512 rows no faster" measured before.)
	for j := lo / pq8PrepRows; j*pq8PrepRows < hi; j++ {
		c.okRows[j] = ok
	}
}

func (c *pq8Call) tiles(lo, hi int) {
	C.hark_pq8(c.xq, c.xsv, c.xsum, c.m, c.p, c.k, c.gs, c.n, C.int(lo), C.int(hi), c.out, c.n)
}

var pq8Calls = sync.Pool{New: func() any {
	c := &pq8Call{}
	c.prep, c.run = c.prepRows, c.tiles
	return c
}}

// pq8OK says whether the int8 kernel may run: on a CPU with the packed
// layout's features (PackedQ4Supported: AVX-512 VNNI) and no AMX, whose
// kernels serve these batches there, unless HARK_PQ8=0. Rounding x to
// int8 per group moves a matmul by about 0.5% of its size (more where a
// group holds an outlier; q8Bound gives the bound), where the exact-x
// kernels are exact up to float32 rounding; prefill takes that, as
// llama.cpp's Q4 x Q8 dot products do, for twice the speed at 512 rows
// (BenchmarkPackedQ8). Tests that hold quantized matmuls to float32
// rounding turn it off (SetPackedInt8); HARK_PQ8=0 does so for a process.
var pq8OK = sync.OnceValue(func() bool {
	return !haveAMX && os.Getenv("HARK_PQ8") != "0"
})

// pq8Use says whether a packed matmul of m rows of x takes the int8
// kernel; tests replace it to hold each kernel to its bound.
var pq8Use = func(m int) bool {
	if m < PackedInt8MinRows {
		return false
	}
	switch pq8Force.Load() {
	case 1:
		return false
	case 2:
		return !haveAMX
	}
	return pq8OK()
}

// packedQ8Matmul computes out = x @ Wᵀ with x quantized per group to
// int8 (qpacked_q8_amd64.c), and reports false, having written nothing,
// when x holds an infinity or NaN.
func packedQ8Matmul(x []float32, m int, p PackedQ4, out []float32) bool {
	k, n := p.Cols, p.Rows
	gpr := k / p.GroupSize
	// Scratch: group sums, then the int8 values (k bytes a row, each
	// broadcast four times) and the lane scales (k/8 a row), each on a
	// cache line.
	need := m*gpr + m*k + m*k/8 + 2*cacheLineFloats
	sp := qmmScratch.Get().(*[]float32)
	defer qmmScratch.Put(sp)
	if cap(*sp) < need {
		*sp = make([]float32, need)
	}
	scratch := (*sp)[:need]
	qAt := lineAligned(scratch, m*gpr)
	svAt := lineAligned(scratch, qAt+m*k)

	c := pq8Calls.Get().(*pq8Call)
	defer func() {
		*c = pq8Call{prep: c.prep, run: c.run, okRows: c.okRows[:0]} // hold no caller memory while pooled
		pq8Calls.Put(c)
	}()
	c.x, c.xsum, c.xsv, c.out = fptr(x), fptr(scratch), fptr(scratch[svAt:]), fptr(out)
	c.xq = (*C.int8_t)(unsafe.Pointer(&scratch[qAt]))
	c.p = (*C.uint8_t)(unsafe.Pointer(&p.Data[0]))
	c.m, c.k, c.gs, c.n = C.int(m), C.int(k), C.int(p.GroupSize), C.int(n)
	chunks := (m + pq8PrepRows - 1) / pq8PrepRows
	c.okRows = append(c.okRows[:0], make([]bool, chunks)...)
	parallelFor(m, pq8PrepRows, pq8PrepRows, c.prep)
	for _, ok := range c.okRows {
		if !ok {
			return false
		}
	}
	tiles := (n + pq4TileRows - 1) / pq4TileRows
	// Each worker takes at least qmmInlineBytes of work (weight bytes
	// times rows of x), as the other quantized kernels do.
	tileWork := pq4TileBytes(k, p.GroupSize) * m
	parallelFor(tiles, 1, max(1, (qmmInlineBytes+tileWork-1)/tileWork), c.run)
	return true
}

// PackedInt8Rows reports whether a packed matmul of m rows of x, each of
// cols values in groups of groupSize, takes the int8-x kernel now: for
// tests above this package, which hold its results to its rounding bound
// rather than to float32 rounding.
func PackedInt8Rows(m, cols, groupSize int) bool {
	return PackedQ4Supported(cols, groupSize) && pq8Use(m) && !pq4UseAMX(m)
}
