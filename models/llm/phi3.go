package llm

import (
	"fmt"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// Phi-3 / Phi-3.5 / Phi-4-mini: the Llama graph (llama.go) with fused projections.
// qkv_proj computes queries, keys and values in one matmul (rows in that
// order) and gate_up_proj the MLP's gate and up halves; only the first
// partial_rotary_factor of each head is rotated. The long-context
// variants' "longrope" scaling is run as mlx-lm runs it (see nn.RoPE). Like
// mlx-lm, the sliding_window some configs carry is ignored.
//
//	h = embed(tokens)
//	for each layer:
//	    q, k, v = split(qkv_proj(norm(h)))
//	    h += o_proj(attention(rope(q), rope(k), v))
//	    gate, up = split(gate_up_proj(norm(h)))
//	    h += down_proj(silu(gate) * up)
//	logits = lm_head(norm(h))

func init() {
	Register(Arch{
		Family: profile.Family{Name: "phi3", Architectures: []string{"Phi3ForCausalLM"}, ModelTypes: []string{"phi3"}, Check: func(cfg *profile.Config) error {
			_, err := phi3Config(cfg.Raw)
			return err
		}},
		New: func(cfg *profile.Config, w *nn.Weights) (Model, error) { return newPhi3(cfg.Raw, w) },
	})
}

type phi3Cfg struct {
	llamaConfig
	PartialRotary float64 `json:"partial_rotary_factor"`
	OrigMaxPos    int     `json:"original_max_position_embeddings"`
}

func phi3Config(raw map[string]any) (*phi3Cfg, error) {
	var c phi3Cfg
	if err := decodeConfig(raw, &c); err != nil {
		return nil, err
	}
	if err := c.defaults(); err != nil {
		return nil, err
	}
	c.PartialRotary = positive(c.PartialRotary, 1)
	dims := int(float64(c.HeadDim) * c.PartialRotary)
	if dims <= 0 || dims%2 != 0 {
		return nil, fmt.Errorf("partial_rotary_factor %v gives %d rotary dims of head_dim %d", c.PartialRotary, dims, c.HeadDim)
	}
	// Phi-3 keeps original_max_position_embeddings beside rope_scaling.
	if s := c.RopeScaling; s != nil && s.OriginalMaxPos == 0 {
		s.OriginalMaxPos = c.OrigMaxPos
	}
	if k := c.RopeScaling.Kind(); (k == "longrope" || k == "su") && len(c.RopeScaling.LongFactor) != dims/2 {
		return nil, fmt.Errorf("rope_scaling long_factor has %d entries for %d rotary dims", len(c.RopeScaling.LongFactor), dims)
	}
	return &c, nil
}

func newPhi3(raw map[string]any, w *nn.Weights) (*llama, error) {
	c, err := phi3Config(raw)
	if err != nil {
		return nil, err
	}
	rope, err := nn.NewRoPE(int(float64(c.HeadDim)*c.PartialRotary), c.RopeTheta, c.RopeTrad, c.RopeScaling, c.MaxPos)
	if err != nil {
		return nil, err
	}
	q, kv := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	// The checkpoint fuses q/k/v and gate/up itself.
	return buildLlama(w, &c.llamaConfig, rope, "phi3", func(p string, a *attention) block {
		a.qkv = nn.Fused(w.Linear(p+"self_attn.qkv_proj", c.Hidden, q+2*kv, c.AttnBias), []int{q, kv, kv})
		return &gatedMLP{
			gateUp: nn.Fused(w.Linear(p+"mlp.gate_up_proj", c.Hidden, 2*c.Intermediate, false), []int{c.Intermediate, c.Intermediate}),
			down:   w.Linear(p+"mlp.down_proj", c.Intermediate, c.Hidden, false),
			glu:    mlx.SwiGLU,
		}
	}), nil
}
