//go:build cgo

package kernels

/*
#cgo CFLAGS: -O3
#include "qmatmul.h"

// pq4_prep writes x's group sums and digits in one pass and, when that
// worked and t1 > 0, runs tiles [0, t1) too, so a matmul that stays on one
// goroutine crosses into C once. It returns 0, having run nothing, when x
// holds an infinity or NaN.
static int pq4_prep(const float* x, int m, int k, int gs, float* xsum, int8_t* xd, float* xsv,
                    const uint8_t* p, int n, int t1, float* out) {
	if (!hark_q4i24_prep_sums(x, m, k, gs, xd, xsv, xsum)) return 0;
	if (t1 > 0) hark_pq4(xd, xsv, xsum, m, p, k, gs, n, 0, t1, out, n);
	return 1;
}

// pq4_prep_amx is pq4_prep for the AMX kernel: it also lays x out in
// tiles (hark_pq4_amx_prep) and runs tiles [0, t1) on the tile unit.
static int pq4_prep_amx(const float* x, int m, int k, int gs, float* xsum, int8_t* xd, float* xsv,
                        int8_t* xb, float* cf, float* xst, const uint8_t* p, int n, int t1, float* out) {
	if (!hark_q4i24_prep_sums(x, m, k, gs, xd, xsv, xsum)) return 0;
	hark_pq4_amx_prep(xd, xsv, xsum, m, k, gs, xb, cf, xst);
	if (t1 > 0) hark_pq4_amx(xb, cf, xst, xd, xsv, xsum, m, p, k, gs, n, 0, t1, out, n);
	return 1;
}
*/
import "C"

import (
	"os"
	"sync"
	"unsafe"
)

// PackedQ4Supported reports whether this CPU runs the packed 4-bit kernel
// for rows of cols values in groups of groupSize: AVX-512 VNNI, VL and
// GFNI, cols a multiple of 128, groups of 64 or 128.
func PackedQ4Supported(cols, groupSize int) bool {
	return C.hark_pq4_ok(C.int(cols), C.int(groupSize)) != 0
}

// pq4Call holds one packed matmul's arguments for its C calls; pooled with
// run bound once, so handing it to parallelFor allocates nothing.
type pq4Call struct {
	xsum, xsv, out, cf, xst *C.float
	xd, xb                  *C.int8_t
	p                       *C.uint8_t
	m, k, gs, n             C.int
	run, runAMX             func(lo, hi int)
}

func (c *pq4Call) tiles(lo, hi int) {
	C.hark_pq4(c.xd, c.xsv, c.xsum, c.m, c.p, c.k, c.gs, c.n, C.int(lo), C.int(hi), c.out, c.n)
}

func (c *pq4Call) tilesAMX(lo, hi int) {
	C.hark_pq4_amx(c.xb, c.cf, c.xst, c.xd, c.xsv, c.xsum, c.m, c.p, c.k, c.gs, c.n, C.int(lo), C.int(hi), c.out, c.n)
}

var pq4Calls = sync.Pool{New: func() any {
	c := &pq4Call{}
	c.run, c.runAMX = c.tiles, c.tilesAMX
	return c
}}

// Batches of pq4AMXMinM to pq4AMXMaxM rows of x (concurrent decode
// streams) take the AMX kernel where the CPU has it and Linux grants the
// tile state: it splits each code once for all rows, where VNNI pays the
// full arithmetic per row. Its cost hardly depends on m (the tile unit
// and the scaling work on 16 rows of x whatever m is), so below 4 rows
// VNNI stays faster (BenchmarkPackedQRows: at 3 rows about even, at 4
// rows AMX 1.3-1.4x, at 8 about 2x, at 16 2.5-3.5x in CPU time).
// HARK_PQ4_AMX=0 keeps VNNI, to compare the two.
const pq4AMXMinM, pq4AMXMaxM = 4, 16

var pq4AMXOK = sync.OnceValue(func() bool {
	return os.Getenv("HARK_PQ4_AMX") != "0" && C.hark_pq4_amx_ok() != 0
})

// pq4UseAMX says whether a matmul of m rows takes the AMX kernel; tests
// replace it to hold both kernels to the reference.
var pq4UseAMX = func(m int) bool { return m >= pq4AMXMinM && m <= pq4AMXMaxM && pq4AMXOK() }

func packedQ4Matmul(x []float32, m int, p PackedQ4, out []float32) {
	k, n := p.Cols, p.Rows
	if pq8Use(m) && !pq4UseAMX(m) && packedQ8Matmul(x, m, p, out) {
		return
	}
	if m >= qmmDequantMinM {
		packedQ4DequantMatmul(x, m, p, out)
		return
	}
	gpr := k / p.GroupSize
	// Scratch: group sums, then the digits (m*k*3 bytes) and lane scales
	// (m*k/8), each on a cache line: the kernel reads them in 64-byte
	// vectors.
	dw := m * k * 3 / 4 // k is a multiple of 128
	need := m*gpr + dw + m*k/8 + 2*cacheLineFloats
	amx := pq4UseAMX(m)
	// The AMX kernel's x tiles, column weights and group sums, each on a
	// cache line too.
	var nc, xbw, cfw int
	if amx {
		nc = int(C.hark_pq4_amx_cols(C.int(m)))
		xbw, cfw = k/64*nc*1024/4, k/64*nc*16 // nc = 3: one x tile per digit
		need += xbw + cfw + gpr*16 + 3*cacheLineFloats
	}
	sp := qmmScratch.Get().(*[]float32)
	if cap(*sp) < need {
		*sp = make([]float32, need)
	}
	scratch := (*sp)[:need]
	at := lineAligned(scratch, m*gpr)
	xd := (*C.int8_t)(unsafe.Pointer(&scratch[at]))
	svAt := lineAligned(scratch, at+dw)
	xsv := fptr(scratch[svAt:])

	tiles := (n + pq4TileRows - 1) / pq4TileRows
	// Each worker takes at least qmmInlineBytes of work (weights times
	// rows of x), as the other quantized kernels do.
	tileWork := pq4TileBytes(k, p.GroupSize) * m
	minTiles := max(4, (qmmInlineBytes+tileWork-1)/tileWork)
	inline := 0
	if tiles < 2*minTiles {
		inline = tiles
	}
	c := pq4Calls.Get().(*pq4Call)
	c.xsum, c.xsv, c.out, c.xd = fptr(scratch), xsv, fptr(out), xd
	c.p = (*C.uint8_t)(unsafe.Pointer(&p.Data[0]))
	c.m, c.k, c.gs, c.n = C.int(m), C.int(k), C.int(p.GroupSize), C.int(n)
	var ok bool
	if amx {
		xbAt := lineAligned(scratch, svAt+m*k/8)
		cfAt := lineAligned(scratch, xbAt+xbw)
		xstAt := lineAligned(scratch, cfAt+cfw)
		c.xb = (*C.int8_t)(unsafe.Pointer(&scratch[xbAt]))
		c.cf, c.xst = fptr(scratch[cfAt:]), fptr(scratch[xstAt:])
		ok = C.pq4_prep_amx(fptr(x), c.m, c.k, c.gs, c.xsum, c.xd, c.xsv, c.xb, c.cf, c.xst, c.p, c.n, C.int(inline), c.out) != 0
		if ok && inline == 0 {
			// Whole blocks of 4 tiles (16 rows) per worker.
			parallelFor(tiles, 4, minTiles, c.runAMX)
		}
	} else {
		ok = C.pq4_prep(fptr(x), c.m, c.k, c.gs, c.xsum, c.xd, c.xsv, c.p, c.n, C.int(inline), c.out) != 0
		if ok && inline == 0 {
			parallelFor(tiles, 1, minTiles, c.run)
		}
	}
	*c = pq4Call{run: c.run, runAMX: c.runAMX} // hold on to no caller memory while pooled
	pq4Calls.Put(c)
	qmmScratch.Put(sp)
	if !ok {
		packedQ4DequantMatmul(x, m, p, out)
	}
}

func packedQ4DequantRows(p PackedQ4, r0, r1 int, out []float32) {
	C.hark_pq4_dequant((*C.uint8_t)(unsafe.Pointer(&p.Data[0])), C.int(p.Cols), C.int(p.GroupSize), C.int(r0), C.int(r1), fptr(out))
}

// pq4TileBytesC is hark_pq4_tile_bytes, for the test that keeps it and
// pq4TileBytes in step.
func pq4TileBytesC(cols, groupSize int) int {
	return int(C.hark_pq4_tile_bytes(C.int(cols), C.int(groupSize)))
}
