//go:build !cgo || !amd64

package kernels

// AVX-512 BF16 is an x86 feature: elsewhere dpHalfT never fires.
var haveDPBF16 = false

func dpbf16GemmT(x []float32, m, k, n int, w []uint16, out []float32) {
	panic("kernels: AVX-512 BF16 GEMM called without AVX-512 BF16")
}
