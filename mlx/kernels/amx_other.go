//go:build !cgo || !amd64

package kernels

// AMX is an x86 feature: elsewhere the hooks in amx.go never fire.
var haveAMX = false

func amxGemmT(x []float32, m, k, n int, wt amxWeights, out []float32) {
	panic("kernels: AMX GEMM called without AMX")
}
