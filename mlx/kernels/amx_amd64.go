//go:build cgo

package kernels

/*
#cgo CFLAGS: -O3
#include <stdint.h>
int hark_amx_init(void);
int hark_amx_pb_bytes(void);
int hark_amx_fs_bytes(void);
void hark_amx_cvt_a(const float* x, int m, int k, int i0, int i1, uint16_t* ab, int kp);
void hark_amx_gemm_t(int kind, const uint16_t* ab, int mp, int kp, int k, int n, const uint16_t* wh,
                     const uint32_t* w, const float* sc, const float* bi, const uint8_t* pq, int gs, int bits,
                     int j0, int j1, float* c, int ldc, int m32, float* ct, uint16_t* pb, float* fs);
*/
import "C"

import (
	"sync"
	"unsafe"
)

// haveAMX reports whether prefill can run on AMX tiles (amx_amd64.c): the
// CPU has them and Linux granted this process their state.
var haveAMX = haveAVX512 && C.hark_amx_init() != 0

// amxScratch is one worker's packed weight panel and dequantizing panel.
type amxScratch struct {
	pb []uint16
	fs []float32
}

var (
	amxScratchPool = sync.Pool{New: func() any {
		return &amxScratch{pb: make([]uint16, int(C.hark_amx_pb_bytes())/2), fs: make([]float32, int(C.hark_amx_fs_bytes())/4)}
	}}
	amxAPool   = sync.Pool{New: func() any { return new([]uint16) }}
	amxOutPool = sync.Pool{New: func() any { return new([]float32) }}
)

// amxGemmT computes out = x @ Wᵀ ([m, n]) on AMX: x rounded to bf16 once,
// each 32-row panel of W packed (dequantized, for 4-bit) into bf16 tiles
// once and multiplied with every row of x, accumulating in float32.
// Workers take panels of W, so each weight is read and packed once.
func amxGemmT(x []float32, m, k, n int, wt amxWeights, out []float32) {
	kp, mp, np := round32(k), round32(m), round32(n)
	ap := amxAPool.Get().(*[]uint16)
	defer amxAPool.Put(ap)
	if cap(*ap) < mp*kp {
		*ap = make([]uint16, mp*kp)
	}
	ab := (*ap)[:mp*kp]
	abp := (*C.uint16_t)(unsafe.Pointer(&ab[0]))
	parallelFor(mp, 32, max(32, (1<<20)/kp), func(lo, hi int) {
		C.hark_amx_cvt_a(fptr(x), C.int(m), C.int(k), C.int(lo), C.int(hi), abp, C.int(kp))
	})

	// Where C goes: out itself, but the partial last row block (m % 32)
	// into a 32-row side buffer, or, when n is not a multiple of 32, all
	// of it into a padded buffer (the last panel writes 32 columns).
	c, ldc, m32 := out, n, mp
	var side []float32
	if n%32 != 0 || m%32 != 0 {
		sp := amxOutPool.Get().(*[]float32)
		defer amxOutPool.Put(sp)
		size := mp * np
		if n%32 == 0 {
			size, m32 = 32*n, m&^31
		}
		if cap(*sp) < size {
			*sp = make([]float32, size)
		}
		side = (*sp)[:size]
		if n%32 != 0 {
			c, ldc = side, np
		}
	}
	var ct *C.float
	if m32 < mp {
		ct = fptr(side)
	}

	var wh *C.uint16_t
	var w *C.uint32_t
	var sc, bi *C.float
	var pq *C.uint8_t
	gs, bits := 0, 0
	switch wt.kind {
	case amxBF16:
		wh = (*C.uint16_t)(unsafe.Pointer(&wt.wh[0]))
	case amxQ:
		w, sc, bi = (*C.uint32_t)(&wt.q.w[0]), fptr(wt.q.scales), fptr(wt.q.biases)
		gs, bits = wt.q.groupSize, wt.q.bits
	case amxPQ4:
		pq = (*C.uint8_t)(unsafe.Pointer(&wt.pq[0]))
		gs, bits = wt.gs, 4
	}
	cp := fptr(c)
	// A worker's share must outweigh its hand-off: at least ~4M
	// multiply-adds (tens of microseconds on AMX).
	minPanels := max(1, (4<<20)/(mp*kp*32))
	parallelFor(np/32, 1, minPanels, func(lo, hi int) {
		s := amxScratchPool.Get().(*amxScratch)
		C.hark_amx_gemm_t(C.int(wt.kind), abp, C.int(mp), C.int(kp), C.int(k), C.int(n), wh, w, sc, bi, pq,
			C.int(gs), C.int(bits), C.int(32*lo), C.int(32*hi), cp, C.int(ldc), C.int(m32), ct,
			(*C.uint16_t)(unsafe.Pointer(&s.pb[0])), fptr(s.fs))
		amxScratchPool.Put(s)
	})

	switch {
	case n%32 != 0:
		for i := range m {
			copy(out[i*n:(i+1)*n], side[i*np:i*np+n])
		}
	case m32 < m:
		copy(out[m32*n:m*n], side[:(m-m32)*n])
	}
}
