package llm

import (
	"fmt"

	"hark/models/nn"
	"hark/models/profile"
)

// Mixtral is the Mistral graph whose MLPs are sparse mixtures
// (block_sparse_moe): num_local_experts SwiGLU experts w1 (gate), w3 (up)
// and w2 (down) of intermediate_size, top num_experts_per_tok routing with
// the chosen probabilities always renormalised. Like mistral here (and
// mlx-lm, and llama.cpp), its sliding_window is not applied.
func init() {
	Register(Arch{
		Family: profile.Family{Name: "mixtral", Architectures: []string{"MixtralForCausalLM"}, ModelTypes: []string{"mixtral"},
			Check: func(cfg *profile.Config) error { _, err := mixtralConfigOf(cfg.Raw); return err },
			Inactive: func(cfg *profile.Config) int64 {
				c, err := mixtralConfigOf(cfg.Raw)
				if err != nil {
					return 0
				}
				return skippedExperts(c.Layers, c.Experts, c.TopK, c.Hidden, c.Intermediate)
			}},
		New: func(cfg *profile.Config, w *nn.Weights) (Model, error) { return newMixtral(cfg.Raw, w) },
	})
}

type mixtralConfig struct {
	llamaConfig
	Experts int `json:"num_local_experts"`
	TopK    int `json:"num_experts_per_tok"`
}

func mixtralConfigOf(raw map[string]any) (*mixtralConfig, error) {
	if err := checkKeys(raw, append(llamaKeys, "num_local_experts", "num_experts_per_tok", "sliding_window")...); err != nil {
		return nil, err
	}
	var c mixtralConfig
	if err := decodeConfig(raw, &c); err != nil {
		return nil, err
	}
	if err := c.defaults(); err != nil {
		return nil, err
	}
	if c.Experts <= 0 || c.TopK <= 0 || c.TopK > c.Experts {
		return nil, fmt.Errorf("num_experts_per_tok %d must be between 1 and num_local_experts %d", c.TopK, c.Experts)
	}
	return &c, nil
}

func newMixtral(raw map[string]any, w *nn.Weights) (Model, error) {
	c, err := mixtralConfigOf(raw)
	if err != nil {
		return nil, err
	}
	rope, err := nn.NewRoPE(c.HeadDim, c.RopeTheta, c.RopeTrad, c.RopeScaling, c.MaxPos)
	if err != nil {
		return nil, err
	}
	names := moeNames{router: "gate", gate: "w1", up: "w3", down: "w2"}
	return buildLlama(w, &c.llamaConfig, rope, "mixtral", func(p string, a *attention) block {
		a.qkv = newQKV(w, p, c.Hidden, c.Heads, c.KVHeads, c.HeadDim, c.AttnBias)
		return newSparseMoE(w, p+"block_sparse_moe.", names, c.Hidden, c.Intermediate, c.Experts, c.TopK, true)
	}), nil
}
