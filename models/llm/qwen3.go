package llm

import (
	"hark/models/nn"
	"hark/models/profile"
)

// Qwen3 (dense) is the Llama graph with two changes: no q/k/v bias, and an
// RMSNorm over each query and key head (q_norm, k_norm, weights [head_dim])
// before RoPE, which keeps attention logits in range without a bias. Its
// config always gives head_dim, which may differ from hidden/heads.
func init() {
	Register(Arch{
		Family: profile.Family{Name: "qwen3", Architectures: []string{"Qwen3ForCausalLM"}, ModelTypes: []string{"qwen3"}, Check: checkLlama},
		New: func(cfg *profile.Config, w *nn.Weights) (Model, error) {
			return newLlama(cfg.Raw, w, llamaVariant{qkNorm: true}, "qwen3")
		},
	})
}
