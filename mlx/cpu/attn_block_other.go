//go:build !cgo || !amd64

package cpu

// haveAttnBlock is false: the unpacked attention GEMM is AVX-512 C
// (attn_block_amd64.c); elsewhere prefill attention uses the kernels'
// GEMM.
const haveAttnBlock = false

func attnGemm(m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	panic("cpu: attnGemm without haveAttnBlock")
}

func attnTranspose(src []float32, rows, cols, lds int, dst []float32, ldd int) {
	panic("cpu: attnTranspose without haveAttnBlock")
}
