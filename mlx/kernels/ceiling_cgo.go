//go:build cgo && (amd64 || arm64)

package kernels

/*
#cgo CFLAGS: -O3
#include "ceiling.h"
*/
import "C"

import "unsafe"

func ceilingRead(p []float32) float32 {
	return float32(C.hark_ceiling_read((*C.float)(unsafe.Pointer(&p[0])), C.size_t(len(p))))
}

func ceilingDot8(a []uint8, b []int8, reps int) int32 {
	return int32(C.hark_ceiling_dot8((*C.uint8_t)(unsafe.Pointer(&a[0])), (*C.int8_t)(unsafe.Pointer(&b[0])), C.size_t(len(a)), C.size_t(reps)))
}
