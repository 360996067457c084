package kernels

import "os"

// Prefill with bf16 weights on AVX-512 BF16 (dpbf16_amd64.c), for CPUs
// that have VDPBF16PS but no AMX (Zen 4 and later, Cooper Lake): x is
// rounded to bf16, as on the AMX path, and W is read as stored. Each
// instruction does twice the multiply-adds of a float32 FMA, and nothing
// is widened, so a bf16 model's prefill is no longer held to the float32
// GEMM's rate. The error bound is the AMX path's (amxTol: 2^-8 of Σ|x·w|
// from x's rounding, plus float32 summation). Like AMX, it only serves
// weights that are bf16 already: f16 weights (Whisper) keep 11
// significant bits and the exact float32 path.

// dpHalfT is out = x @ Wᵀ for a bf16 W [n, k] on AVX-512 BF16; it reports
// false, doing nothing, where that path does not apply: no such CPU, f16
// weights, a batch under amxMinM or a reduction under amxMinK (the AMX
// path's limits, for the same reasons), or HARK_BF16DOT=0 in the
// environment (read at each call, so comparisons and tests can switch it
// in one process).
func dpHalfT(x []float32, m, k, n int, w []uint16, format Half, out []float32) bool {
	if !haveDPBF16 || format != BF16 || m < amxMinM || k < amxMinK || os.Getenv("HARK_BF16DOT") == "0" {
		return false
	}
	dpbf16GemmT(x, m, k, n, w, out)
	return true
}
