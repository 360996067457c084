//go:build !cgo || !amd64

package kernels

// qgemmT has no fused kernel off amd64 (or without cgo): the caller
// dequantizes tiles and runs Sgemm.
func qgemmT(x []float32, m, k, n int, q qmat, out []float32) bool { return false }
