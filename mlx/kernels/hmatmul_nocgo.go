//go:build !cgo

package kernels

func halfToF32(dst []float32, src []uint16, format Half) { halfToF32Go(dst, src, format) }

func hmatmulSmall(x []float32, m, k, n int, w []uint16, format Half, transB bool, out []float32) {
	hmatmulGo(x, m, k, n, w, format, transB, out)
}
