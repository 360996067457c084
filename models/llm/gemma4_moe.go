package llm

import (
	"math"

	"hark/mlx"
	"hark/models/nn"
)

// Gemma 4's mixture-of-experts block (26B-A4B; enable_moe_block), as
// transformers' Gemma4TextDecoderLayer runs it beside the dense MLP. With
// h the stream after attention:
//
//	dense   = post_feedforward_layernorm_1(mlp(pre_feedforward_layernorm(h)))
//	r       = rms(h) * router.scale / sqrt(hidden)           (no norm weight)
//	p       = softmax(router.proj(r)); top = the top_k_experts largest
//	w       = p[top] / Σ p[top] * router.per_expert_scale[top]
//	experts = post_feedforward_layernorm_2(Σ_top w_e · down_e(gelu(gate_e(x)) * up_e(x)))
//	          with x = pre_feedforward_layernorm_2(h)
//	h      += post_feedforward_layernorm(dense + experts)
//
// Experts load from transformers' fused experts.gate_up_proj [E, 2I, H]
// (gate rows first) and experts.down_proj [E, H, I], or from mlx-lm's
// experts.switch_glu.{gate,up,down}_proj (stacked, quantized or not). The
// rows go through the gather-matmul sorted by expert, as in moe.go.
type gemma4MoE struct {
	router                   nn.Layer   // [E, hidden]
	scale                    *mlx.Array // router.scale / sqrt(hidden)
	perExpert                *mlx.Array // [E]
	gateUp                   *nn.ExpertMatrix
	gate, up, down           *nn.ExpertMatrix
	preNorm, postDense, post *nn.RMSNorm // pre_feedforward_layernorm_2, post_feedforward_layernorm_1, _2
	eps                      float32
	topK, inter              int
}

func newGemma4MoE(w *nn.Weights, c *gemma4Cfg, p string) *gemma4MoE {
	if !c.MoE {
		return nil
	}
	e, h, in := c.Experts, c.Hidden, c.MoEInter
	m := &gemma4MoE{
		router:    w.Linear(p+"router.proj", h, e, false),
		perExpert: w.Array(p+"router.per_expert_scale", e),
		preNorm:   w.RMSNorm(p+"pre_feedforward_layernorm_2", h, c.Eps, false),
		postDense: w.RMSNorm(p+"post_feedforward_layernorm_1", h, c.Eps, false),
		post:      w.RMSNorm(p+"post_feedforward_layernorm_2", h, c.Eps, false),
		eps:       float32(c.Eps), topK: c.TopK, inter: in,
	}
	if s := w.Array(p+"router.scale", h); s != nil {
		m.scale = w.Replace(s, mlx.MulScalar(s, 1/math.Sqrt(float64(h))))
	}
	x := p + "experts."
	switch {
	case w.Has(x + "gate_up_proj"):
		m.gateUp = nn.DenseExperts(w.Array(x+"gate_up_proj", e, 2*in, h))
		m.down = nn.DenseExperts(w.Array(x+"down_proj", e, h, in))
	case w.Has(x + "switch_glu.gate_proj.weight"):
		m.gate = w.StackedExperts(x+"switch_glu.gate_proj", e, h, in)
		m.up = w.StackedExperts(x+"switch_glu.up_proj", e, h, in)
		m.down = w.StackedExperts(x+"switch_glu.down_proj", e, in, h)
	default:
		w.Failf("missing tensor %sgate_up_proj (fused, as transformers writes it) or %sswitch_glu.gate_proj.weight (stacked, as mlx-lm writes it)", x, x)
	}
	return m
}

// forward returns what the feed-forward part adds to the stream h, given
// the dense MLP's output on it.
func (m *gemma4MoE) forward(h, dense *mlx.Array, post *nn.RMSNorm) *mlx.Array {
	b, l, d := h.Dim(0), h.Dim(1), h.Dim(2)
	t, k := b*l, m.topK
	hs := mlx.Reshape(h, t, 1, d)
	r := mlx.Mul(mlx.RMSNorm(hs, nil, m.eps), m.scale)
	probs := mlx.Softmax(mlx.AsType(m.router.Forward(r), mlx.Float32), -1) // [T, 1, E]
	top := mlx.ArgTopK(probs, k, -1)                                       // [T, 1, k]
	weights := mlx.TakeAlongAxis(probs, top, -1)
	weights = mlx.Mul(mlx.Div(weights, mlx.Sum(weights, true, -1)), mlx.Take(m.perExpert, top, 0))
	expert, token, order := expertRows(top, t, k)
	x := m.preNorm.Forward(hs)
	var gate, up *mlx.Array
	if m.gateUp != nil {
		gu := m.gateUp.Apply(x, token, expert, true) // [T*k, 1, 2I]
		gate, up = mlx.SliceAxis(gu, 2, 0, m.inter), mlx.SliceAxis(gu, 2, m.inter, 2*m.inter)
	} else {
		gate, up = m.gate.Apply(x, token, expert, true), m.up.Apply(x, token, expert, true)
	}
	y := m.down.Apply(geluGLU(gate, up), nil, expert, true)
	experts := m.post.Forward(mlx.Reshape(combineRows(y, order, weights, t, k, d), b, l, d))
	return post.Forward(mlx.Add(m.postDense.Forward(dense), experts))
}
