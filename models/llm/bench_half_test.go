package llm_test

import (
	"math/rand/v2"
	"testing"

	"hark/mlx"
	"hark/models/llm/llmtest"
)

// benchDecodeMatmulsHalf is benchDecodeMatmuls for 16-bit weights: one
// decode step's matmuls of shape s (fused q/k/v, o, fused gate/up and down
// per layer, then the tied output head) on random weights of dtype dt,
// through mlx as the model calls them, and nothing between them. Compared
// with the model's decode %read it splits the gap to the target into the
// kernel's streaming and everything else a token costs (small ops,
// hand-offs between matmuls, the logits' copy and argmax).
func benchDecodeMatmulsHalf(b *testing.B, s llmtest.Shape, dt mlx.DType) {
	r := rand.New(rand.NewPCG(6, 6))
	qkv := s.Heads*s.HeadDim + 2*s.KVHeads*s.HeadDim
	var mats []*mlx.Array
	bytes := 0
	add := func(k, n int) {
		w := make([]uint16, n*k)
		for i := range w {
			w[i] = uint16(r.Uint32()) & 0x3fff // finite and moderate in bf16 and f16
		}
		a := mlx.FromBits(w, dt, n, k)
		mlx.Resident(a)
		mats = append(mats, a)
		bytes += 2 * n * k
	}
	for range s.Layers {
		add(s.Hidden, qkv)
		add(s.Heads*s.HeadDim, s.Hidden)
		add(s.Hidden, 2*s.Intermediate)
		add(s.Intermediate, s.Hidden)
	}
	add(s.Hidden, s.Vocab)
	defer mlx.Free(mats...)
	steps := make([]decodeMatmul, len(mats))
	for i, w := range mats {
		steps[i] = decodeMatmul{w.Dims()[1], func(x *mlx.Array) *mlx.Array { return mlx.MatmulT(x, w) }}
	}
	replayDecodeMatmuls(b, r, steps, bytes)
}
