//go:build !cgo

package kernels

// PackedQ4Supported is false without cgo: the packed kernel is C.
func PackedQ4Supported(cols, groupSize int) bool { return false }

func packedQ4Matmul(x []float32, m int, p PackedQ4, out []float32) {
	panic("kernels: packed 4-bit matmul without cgo")
}

func packedQ4DequantRows(p PackedQ4, r0, r1 int, out []float32) {
	panic("kernels: packed 4-bit dequantize without cgo")
}

// PackedInt8Rows is false without cgo: the int8-x kernel is C.
func PackedInt8Rows(m, cols, groupSize int) bool { return false }
