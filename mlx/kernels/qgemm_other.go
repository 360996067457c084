//go:build !cgo || !amd64

package kernels

// qgemmT and qgemmPackedT have no fused kernel off amd64 (or without
// cgo): the callers dequantize tiles and run Sgemm.
func qgemmT(x []float32, m, k, n int, q qmat, out []float32) bool { return false }

func qgemmPackedT(x []float32, m int, p PackedQ4, out []float32) bool { return false }
