package llm_test

import (
	"testing"

	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/llm/llmtest"
)

// TestHalfWeightsStayHalf: a bf16 or f16 checkpoint's matrices are held in
// 16 bits (issue 13: weights keep their file dtype), so the model holds
// its matrices in half the memory of its float32 twin; only the vectors
// (norms, biases) are widened, as nn.HeldDType says.
func TestHalfWeightsStayHalf(t *testing.T) {
	mlxtest.NoLeaks(t)
	gen := llmtest.Llama(llmtest.Tiny, "qwen2", false)
	var vectors int64
	for _, ts := range gen.Tensors {
		if len(ts.Shape) == 1 {
			vectors += 4 * int64(ts.Shape[0])
		}
	}
	full := writeAndOpen(t, gen, llmtest.Quant{}).Info().WeightBytes
	for _, dt := range []safetensors.DType{safetensors.BF16, safetensors.F16} {
		got := writeAndOpen(t, gen, llmtest.Quant{Float: dt}).Info().WeightBytes
		if want := vectors + (full-vectors)/2; got != want {
			t.Errorf("%s: the model holds %d bytes of weights, want %d (matrices in 16 bits, %d bytes of float32 vectors)", dt, got, want, vectors)
		}
	}
}
