//go:build cgo && !amd64

package kernels

// The int8 multi-row kernel is AVX-512 VNNI code (qpacked_q8_amd64.c);
// elsewhere packed batches keep the other kernels.
var pq8Use = func(m int) bool { return false }

func packedQ8Matmul(x []float32, m int, p PackedQ4, out []float32) bool { return false }

// PackedInt8Rows is false: no int8-x kernel here.
func PackedInt8Rows(m, cols, groupSize int) bool { return false }
