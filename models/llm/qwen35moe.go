package llm

import (
	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// Qwen3.5-MoE is the Qwen3.5 hybrid trunk (see qwen35.go) with a mixture of
// experts as every layer's feed-forward:
//
//	p = softmax(mlp.gate(x)); the top num_experts_per_tok, renormalised
//	y = Σ p_e · expert_e(x) + sigmoid(shared_expert_gate(x)) · shared_expert(x)
//
// Hugging Face's release stores each layer's experts fused:
// mlp.experts.gate_up_proj [E, 2I, H] (the gate's rows first) and
// mlp.experts.down_proj [E, H, I]; mlx-lm's conversion splits them into
// mlp.switch_mlp.{gate,up,down}_proj, quantized or not. Either is read.
func init() {
	Register(Arch{
		Family: profile.Family{Name: "qwen3_5_moe", Architectures: []string{"Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeForCausalLM"},
			ModelTypes: []string{"qwen3_5_moe", "qwen3_5_moe_text"},
			Check:      func(cfg *profile.Config) error { _, err := qwen35ConfigOf(cfg.Raw, true); return err },
			Inactive: func(cfg *profile.Config) int64 {
				c, err := qwen35ConfigOf(cfg.Raw, true)
				if err != nil {
					return 0
				}
				return sparseSkipped(c.Layers, c.sparse, c.Experts, c.TopK, c.Hidden, c.MoEInter)
			}},
		New: func(cfg *profile.Config, w *nn.Weights) (Model, error) { return newQwen35(cfg.Raw, w, true) },
	})
}

// newQwen35MoE loads the block under p (the layer's "mlp.").
func newQwen35MoE(w *nn.Weights, p string, c *qwen35Config) *sparseMoE {
	e, h, in := c.Experts, c.Hidden, c.MoEInter
	m := &sparseMoE{
		router:   w.Linear(p+"gate", h, e, false),
		experts:  e,
		topK:     c.TopK,
		normTopK: c.normTopKProb,
	}
	fused := p + "experts.gate_up_proj"
	switch {
	case w.Has(fused):
		m.gate, m.up = splitGateUp(w, fused, e, in, h)
		m.down = &nn.ExpertMatrix{W: w.Array(p+"experts.down_proj", e, h, in)}
	case w.Has(p + "switch_mlp.gate_proj.weight"):
		m.gate = w.Experts(p, "gate_proj", "gate_proj", e, h, in)
		m.up = w.Experts(p, "up_proj", "up_proj", e, h, in)
		m.down = w.Experts(p, "down_proj", "down_proj", e, in, h)
	default:
		w.Failf("missing tensor %s ([%d, %d, %d], Hugging Face's fused experts) or %sswitch_mlp.gate_proj.weight (mlx-lm's)", fused, e, 2*in, h, p)
	}
	if c.SharedInter > 0 {
		m.shared = &sharedExpert{
			mlp:  loadGatedMLP(w, p+"shared_expert.", h, c.SharedInter, false, mlx.SwiGLU),
			gate: w.Linear(p+"shared_expert_gate", h, 1, false),
		}
	}
	return m
}

// splitGateUp loads a fused [E, 2I, H] tensor as its gate and up halves,
// which the gather-matmul then reads per expert.
func splitGateUp(w *nn.Weights, name string, e, inter, h int) (gate, up *nn.ExpertMatrix) {
	gu := w.Array(name, e, 2*inter, h)
	if gu == nil {
		return &nn.ExpertMatrix{}, &nn.ExpertMatrix{} // reported
	}
	g, u := mlx.SliceAxis(gu, 1, 0, inter), mlx.SliceAxis(gu, 1, inter, 2*inter)
	gc, uc := mlx.Copy(g), mlx.Copy(u)
	mlx.Free(g, u)
	return &nn.ExpertMatrix{W: w.Replace(gu, gc)}, &nn.ExpertMatrix{W: w.Adopt(uc)}
}

// sharedExpert is the always-on expert, scaled per token by a sigmoid gate.
type sharedExpert struct {
	mlp  gatedMLP
	gate nn.Layer // [1, hidden]
}

func (s *sharedExpert) forward(x *mlx.Array) *mlx.Array {
	sc := mlx.NewScope()
	defer sc.Close()
	return sc.Keep(mlx.Mul(s.mlp.forward(x), mlx.Sigmoid(s.gate.Forward(x))))
}
