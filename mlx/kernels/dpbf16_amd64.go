//go:build cgo

package kernels

/*
#cgo CFLAGS: -O3
#include <stdint.h>
int hark_dpbf16_cpu(void);
int hark_dpbf16_pb_bytes(void);
void hark_dpbf16_pack_a(const float* x, int m, int k, int i0, int i1, uint32_t* ap, int kp, uint16_t* row);
void hark_dpbf16_gemm_t(const uint32_t* ap, int m, int mp, int kp, int k, int n, const uint16_t* w, int j0,
                        int j1, float* c, int ldc, uint16_t* pb);
*/
import "C"

import (
	"sync"
	"unsafe"
)

// haveDPBF16 reports whether the AVX-512 BF16 GEMM runs here. With AMX
// the AMX path comes first and this one is not reached.
var haveDPBF16 = haveAVX512 && C.hark_dpbf16_cpu() != 0

// dpMR is the micro-kernel's row count: A is packed in panels of 12 rows.
const dpMR = 12

// dpScratch is one worker's W panel (hark_dpbf16_pb_bytes) and one row
// of x rounded to bf16 (packing A).
var dpScratch = sync.Pool{New: func() any {
	s := make([]uint16, int(C.hark_dpbf16_pb_bytes())/2)
	return &s
}}

// dpbf16GemmT computes out = x @ Wᵀ ([m, n]) for a bf16 W [n, k]: x is
// rounded and packed once (its rows split over the threads), then the
// workers take 32-column panels of W, so each weight is read and packed
// once per k block.
func dpbf16GemmT(x []float32, m, k, n int, w []uint16, out []float32) {
	kp, mp := round32(k), (m+dpMR-1)/dpMR*dpMR
	// A's panels: mp·kp bf16, in a float32 buffer of the same bytes so
	// that it recycles through the large-buffer free lists.
	abuf := getTile(mp * kp / 2)
	defer GiveF32(abuf)
	ap := (*C.uint32_t)(unsafe.Pointer(&abuf[0]))
	parallelFor(mp, dpMR, max(dpMR, (1<<20)/kp), func(lo, hi int) {
		row := make([]uint16, kp)
		C.hark_dpbf16_pack_a(fptr(x), C.int(m), C.int(k), C.int(lo), C.int(hi), ap, C.int(kp),
			(*C.uint16_t)(unsafe.Pointer(&row[0])))
	})
	wp := (*C.uint16_t)(unsafe.Pointer(&w[0]))
	// A worker's share must outweigh its hand-off: at least ~4M
	// multiply-adds, as on the AMX path.
	panels := (n + 31) / 32
	minPanels := max(1, (4<<20)/(mp*kp*32))
	parallelFor(panels, 1, minPanels, func(lo, hi int) {
		sp := dpScratch.Get().(*[]uint16)
		C.hark_dpbf16_gemm_t(ap, C.int(m), C.int(mp), C.int(kp), C.int(k), C.int(n), wp, C.int(32*lo),
			C.int(min(32*hi, n)), fptr(out), C.int(n), (*C.uint16_t)(unsafe.Pointer(&(*sp)[0])))
		dpScratch.Put(sp)
	})
}
