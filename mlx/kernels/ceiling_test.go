package kernels

import (
	"testing"
	"unsafe"
)

// The ceiling kernels compute what they claim, so their timings time the
// work: the read sums every 64-bit word, the int8 dot is the exact integer
// dot product times its repetitions.
func TestCeilingKernels(t *testing.T) {
	// 1000 vectors and a tail of three words the vector loop leaves.
	buf := alignedF32(64*1000 + 6)
	for i := range buf {
		buf[i] = float32(i%3) + 1e-3*float32(i)
	}
	var want uint64
	for _, w := range unsafe.Slice((*uint64)(unsafe.Pointer(&buf[0])), len(buf)/2) {
		want += w
	}
	if got := ceilingRead(buf); got != want {
		t.Errorf("ceilingRead = %v, want %v", got, want)
	}
	const n, reps = 1024, 3
	a, b := make([]uint8, n), make([]int8, n)
	var dot int32
	for i := range n {
		a[i], b[i] = uint8(i*7%127), int8(i*13%255-127)
		dot += int32(a[i]) * int32(b[i])
	}
	if got := ceilingDot8(a, b, reps); got != reps*dot {
		t.Errorf("ceilingDot8 = %d, want %d", got, reps*dot)
	}
}
