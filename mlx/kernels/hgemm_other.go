//go:build !cgo || !amd64 || !(linux || darwin)

package kernels

// hgemmT packs 16-bit panels on AVX-512 only: elsewhere the widened tile
// and Sgemm serve.
func hgemmT(x []float32, m, k, n int, w []uint16, format Half, out []float32) bool { return false }
