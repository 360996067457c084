package kernels

import "testing"

// The ceiling kernels compute what they claim, so their timings time the
// work: the read sums every 64-bit word, the int8 dot is the exact integer
// dot product times its repetitions.
func TestCeilingKernels(t *testing.T) {
	// 1000 vectors and a tail of three words the vector loop leaves.
	buf := make([]uint64, 32*1000+3)
	var want uint64
	for i := range buf {
		buf[i] = uint64(i)*0x9e3779b97f4a7c15 + 1 // wraps in the sum
		want += buf[i]
	}
	if got := ceilingRead(buf); got != want {
		t.Errorf("ceilingRead = %v, want %v", got, want)
	}
	if got := readScalar(buf); got != want {
		t.Errorf("readScalar = %v, want %v", got, want)
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
