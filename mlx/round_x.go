package mlx

import "math"

// ExactQuantizedX turns off the current backend's rounding of x in
// prompt-sized quantized matmuls (XRounder), so they are exact up to
// float32 rounding at every batch size, and returns what restores it:
// for tests that hold quantized models to that.
func ExactQuantizedX() (restore func()) {
	if r, ok := DefaultBackend().(XRounder); ok {
		return r.SetRoundX(false)
	}
	return func() {}
}

// RoundXMinRows is the fewest rows of x the current backend's quantized
// matmuls may round (XRounder); math.MaxInt when it rounds none. Batched
// and speculative decode stay below it, so their rows match single-row
// decode bit for bit.
func RoundXMinRows() int {
	if r, ok := DefaultBackend().(XRounder); ok {
		return r.RoundXMinRows()
	}
	return math.MaxInt
}

// ExactQuantizedKV turns off the current backend's rounding of q and of
// the attention weights in decode attention over a quantized KV cache
// (KVRounder), so that attention over the codes equals attention over the
// dequantized cache up to float32 rounding, and returns what restores it:
// for tests that hold a quantized cache to that.
func ExactQuantizedKV() (restore func()) {
	if r, ok := DefaultBackend().(KVRounder); ok {
		return r.SetRoundKV(false)
	}
	return func() {}
}
