//go:build !cgo

package kernels

func qmatmulT(x []float32, m, k, n int, q qmat, out []float32) {
	if m >= qmmDequantMinM {
		qmatmulDequantT(x, m, k, n, q, out)
		return
	}
	qmatmulGo(x, m, k, n, q, true, out)
}

func qmatmulN(x []float32, m, k, n int, q qmat, out []float32) {
	if m >= qmmDequantMinM {
		qmatmulDequantN(x, m, k, n, q, out)
		return
	}
	qmatmulGo(x, m, k, n, q, false, out)
}
