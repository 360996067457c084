package llm

import (
	"fmt"
	"slices"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// Qwen3-MoE is the Qwen3 graph (q/k RMSNorm, no biases) whose MLPs are
// mixtures of experts: num_experts SwiGLU experts of
// moe_intermediate_size, top num_experts_per_tok routing, the chosen
// probabilities renormalised when norm_topk_prob. Layers listed in
// mlp_only_layers, and all but every decoder_sparse_step-th, keep a dense
// MLP of intermediate_size.
func init() {
	Register(Arch{
		Family: profile.Family{Name: "qwen3_moe", Architectures: []string{"Qwen3MoeForCausalLM"}, ModelTypes: []string{"qwen3_moe"},
			Check:    func(cfg *profile.Config) error { _, err := qwen3MoEConfigOf(cfg.Raw); return err },
			Inactive: qwen3MoEInactive},
		New: func(cfg *profile.Config, w *nn.Weights) (Model, error) { return newQwen3MoE(cfg.Raw, w) },
	})
}

type qwen3MoEConfig struct {
	llamaConfig
	Experts       int   `json:"num_experts"`
	TopK          int   `json:"num_experts_per_tok"`
	MoEInter      int   `json:"moe_intermediate_size"`
	NormTopK      bool  `json:"norm_topk_prob"`
	SparseStep    int   `json:"decoder_sparse_step"`
	MLPOnly       []int `json:"mlp_only_layers"`
	SlidingWindow *int  `json:"sliding_window"`
	UseSliding    bool  `json:"use_sliding_window"`
}

func qwen3MoEConfigOf(raw map[string]any) (*qwen3MoEConfig, error) {
	if err := checkKeys(raw, append(llamaKeys, "num_experts", "num_experts_per_tok", "moe_intermediate_size", "norm_topk_prob",
		"decoder_sparse_step", "mlp_only_layers", "sliding_window", "use_sliding_window", "max_window_layers")...); err != nil {
		return nil, err
	}
	var c qwen3MoEConfig
	if err := decodeConfig(raw, &c); err != nil {
		return nil, err
	}
	if err := c.defaults(); err != nil {
		return nil, err
	}
	if c.UseSliding {
		return nil, fmt.Errorf("use_sliding_window true is not supported")
	}
	c.SparseStep = positive(c.SparseStep, 1)
	if c.Experts <= 0 || c.MoEInter <= 0 {
		return nil, fmt.Errorf("config.json needs positive num_experts and moe_intermediate_size")
	}
	if c.TopK <= 0 || c.TopK > c.Experts {
		return nil, fmt.Errorf("num_experts_per_tok %d must be between 1 and num_experts %d", c.TopK, c.Experts)
	}
	return &c, nil
}

// sparse reports whether layer i is a mixture of experts (HF's rule).
func (c *qwen3MoEConfig) sparse(i int) bool {
	return !slices.Contains(c.MLPOnly, i) && (i+1)%c.SparseStep == 0
}

func newQwen3MoE(raw map[string]any, w *nn.Weights) (Model, error) {
	c, err := qwen3MoEConfigOf(raw)
	if err != nil {
		return nil, err
	}
	rope, err := nn.NewRoPE(c.HeadDim, c.RopeTheta, c.RopeTrad, c.RopeScaling, c.MaxPos)
	if err != nil {
		return nil, err
	}
	names := moeNames{router: "gate", gate: "gate_proj", up: "up_proj", down: "down_proj"}
	layer := 0
	return buildLlama(w, &c.llamaConfig, rope, "qwen3_moe", func(p string, a *attention) block {
		i := layer
		layer++
		a.qkv = newQKV(w, p, c.Hidden, c.Heads, c.KVHeads, c.HeadDim, c.AttnBias)
		a.qNorm = w.RMSNorm(p+"self_attn.q_norm", c.HeadDim, c.Eps, false)
		a.kNorm = w.RMSNorm(p+"self_attn.k_norm", c.HeadDim, c.Eps, false)
		if !c.sparse(i) {
			mlp := newGatedMLP(w, p, c.Hidden, c.Intermediate, false, mlx.SwiGLU)
			return &mlp
		}
		return newSparseMoE(w, p+"mlp.", names, c.Hidden, c.MoEInter, c.Experts, c.TopK, c.NormTopK)
	}), nil
}

// qwen3MoEInactive is the weights of the experts a token skips, over
// every sparse layer (profile.Family.Inactive).
func qwen3MoEInactive(cfg *profile.Config) int64 {
	c, err := qwen3MoEConfigOf(cfg.Raw)
	if err != nil {
		return 0
	}
	return sparseSkipped(c.Layers, c.sparse, c.Experts, c.TopK, c.Hidden, c.MoEInter)
}
