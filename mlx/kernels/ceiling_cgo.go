//go:build cgo && (amd64 || arm64)

package kernels

/*
#cgo CFLAGS: -O3
#include "ceiling.h"
*/
import "C"

import "unsafe"

// ceilingRead sums p, wrapping: a read whose adds never hold up its loads.
func ceilingRead(p []uint64) uint64 {
	return uint64(C.hark_ceiling_read((*C.uint64_t)(unsafe.Pointer(&p[0])), C.size_t(len(p))))
}

func ceilingDot8(a []uint8, b []int8, reps int) int32 {
	return int32(C.hark_ceiling_dot8((*C.uint8_t)(unsafe.Pointer(&a[0])), (*C.int8_t)(unsafe.Pointer(&b[0])), C.size_t(len(a)), C.size_t(reps)))
}
