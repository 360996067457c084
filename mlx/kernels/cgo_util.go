//go:build cgo

package kernels

import "C"

// fptr passes a non-empty float32 slice to C. The C side only reads or
// writes within the call, so no pinning is needed.
func fptr(s []float32) *C.float { return (*C.float)(&s[0]) }

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
