package nn

import (
	"math"

	"hark/mlx"
)

// Attention is scaled dot-product attention over q [B, Hq, Lq, D] and the
// cache's k, v [B, Hkv, Lk, D]. softcap > 0 applies Gemma 2-style logit
// soft-capping (cap * tanh(scores / cap)) before the mask, which the fused
// kernel does not offer, so that case is computed step by step.
func Attention(q, k, v *mlx.Array, scale float32, mask mlx.Mask, softcap float32) *mlx.Array {
	if softcap <= 0 {
		return mlx.ScaledDotProductAttention(q, k, v, scale, mask)
	}
	s := mlx.NewScope()
	defer s.Close()
	hq, hkv := q.Dim(1), k.Dim(1)
	if hq != hkv { // query head h reads kv head h / (hq/hkv)
		k, v = mlx.Repeat(k, hq/hkv, 1), mlx.Repeat(v, hq/hkv, 1)
	}
	scores := mlx.MulScalar(mlx.MatmulT(q, k), float64(scale))
	scores = mlx.MulScalar(mlx.Tanh(mlx.DivScalar(scores, float64(softcap))), float64(softcap))
	lq, lk := q.Dim(2), k.Dim(2)
	if mask.Causal {
		scores = mlx.Where(mlx.CreateCausalMask(lq, lk, mask.Window), scores, mlx.Scalar(math.Inf(-1), scores.DType()))
	}
	if m := mask.Array; m != nil {
		if m.DType() == mlx.Bool {
			scores = mlx.Where(m, scores, mlx.Scalar(math.Inf(-1), scores.DType()))
		} else {
			scores = mlx.Add(scores, m)
		}
	}
	return s.Keep(mlx.Matmul(mlx.Softmax(scores, -1), v))
}
