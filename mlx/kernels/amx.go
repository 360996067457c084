package kernels

import "os"

// Prefill on AMX tiles (amx_amd64.c, where the CPU and OS allow it): the
// hooks below take an x @ Wᵀ with a batch of at least amxMinM rows and W
// in bf16 or 4-bit, and report false, doing nothing, otherwise. The
// activations are rounded to bf16 (8 significant bits) on this path, so
// it only serves weights that are already bf16 or quantized; f16 weights
// keep 11 significant bits and stay on the float32 path.

// amxMinM is the batch from which the AMX GEMM replaces the float32 paths.
// Below it the streaming kernels still win: packing a weight panel into
// tiles costs about as much as streaming it, and a 32-row tile block is
// mostly padding.
// BenchmarkAMXPrefill (0.5B shapes, CPU time, AMX against the float32
// path in the same loop): at m=16 even, at m=32 2.2-2.8x, at 128-512
// 3.1-3.9x.
var amxMinM = 32

// Weight formats of the AMX GEMM.
const (
	amxBF16 = 1
	amxQ    = 2
	amxPQ4  = 3
)

// amxWeights is W [n, k] for amxGemmT in one of the formats above.
type amxWeights struct {
	kind int
	wh   []uint16 // amxBF16
	q    qmat     // amxQ
	pq   []byte   // amxPQ4
	gs   int      // amxPQ4
}

func round32(v int) int { return (v + 31) &^ 31 }

// amxMinK keeps the AMX path to weight matrices: every LLM's hidden size
// is at least this, while attention over a quantized KV cache multiplies
// by K with k = head_dim (at most 256), where x's bf16 rounding would
// shift attention scores (activations, not already-lossy weights) and the
// product is small anyway.
const amxMinK = 512

// amxOK reports whether the AMX GEMM takes an m-row product with a k-long
// reduction. HARK_AMX=0 in the environment turns the path off, read at
// each call (a few ns next to a prefill GEMM) so comparisons and tests
// can switch it in one process.
func amxOK(m, k int) bool {
	return haveAMX && m >= amxMinM && k >= amxMinK && os.Getenv("HARK_AMX") != "0"
}

// amxQOK reports whether the AMX GEMM takes this quantized format: the
// AVX-512 dequantizing packers' formats, k a whole number of tile steps.
func amxQOK(k, gs, bits int) bool {
	return k%32 == 0 && (bits == 2 || bits == 4 || bits == 8) && gs > 0 && 256%gs == 0 && k%gs == 0 && gs%(32/bits) == 0
}

// amxQGemmT is out = x @ Wᵀ for W quantized [n, k] in the MLX layout.
func amxQGemmT(x []float32, m, k, n int, q qmat, out []float32) bool {
	if !amxOK(m, k) || !amxQOK(k, q.groupSize, q.bits) {
		return false
	}
	amxGemmT(x, m, k, n, amxWeights{kind: amxQ, q: q}, out)
	return true
}

// amxPackedT is out = x @ Wᵀ for W in the packed 4-bit layout.
func amxPackedT(x []float32, m int, p PackedQ4, out []float32) bool {
	if !amxOK(m, p.Cols) || !amxQOK(p.Cols, p.GroupSize, 4) {
		return false
	}
	amxGemmT(x, m, p.Cols, p.Rows, amxWeights{kind: amxPQ4, pq: p.Data, gs: p.GroupSize}, out)
	return true
}

// amxHalfT is out = x @ Wᵀ for a bf16 W [n, k].
func amxHalfT(x []float32, m, k, n int, w []uint16, format Half, out []float32) bool {
	if !amxOK(m, k) || format != BF16 {
		return false
	}
	amxGemmT(x, m, k, n, amxWeights{kind: amxBF16, wh: w}, out)
	return true
}
