package llm

import (
	"fmt"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// GLM-4.5, GLM-4.5-Air, GLM-4.6 and GLM-4.7 (glm4_moe): the Llama graph
// with grouped-query attention (not GLM-4.7-Flash's MLA, see deepseek2.go)
// and DeepSeek-V3's mixture of experts.
//
//   - q, k and v carry a bias when attention_bias (o_proj never does);
//   - use_qk_norm adds an RMSNorm over each query and key head;
//   - RoPE turns only the first partial_rotary_factor of each head (0.5
//     unless set), in the split-half layout, at base^(-2i/rotary dims);
//   - the first first_k_dense_replace layers keep a dense MLP; the rest
//     route each token to num_experts_per_tok of n_routed_experts experts
//     by sigmoid scores plus e_score_correction_bias (limited to the
//     topk_group best of n_group groups), weight them by the scores alone
//     (renormalised when norm_topk_prob), scale by routed_scaling_factor
//     and add n_shared_experts always-on experts;
//   - the num_nextn_predict_layers multi-token-prediction layers stored
//     after the last one are skipped (mlx-lm's conversion drops them).
func init() {
	Register(Arch{
		Family: profile.Family{Name: "glm4_moe", Architectures: []string{"Glm4MoeForCausalLM"}, ModelTypes: []string{"glm4_moe"},
			Check:    func(cfg *profile.Config) error { _, err := glm4MoEConfigOf(cfg.Raw); return err },
			Inactive: glm4MoEInactive},
		New: func(cfg *profile.Config, w *nn.Weights) (Model, error) { return newGLM4MoE(cfg.Raw, w) },
	})
}

type glm4MoEConfig struct {
	llamaConfig
	Partial    *float64 `json:"partial_rotary_factor"`
	QKNorm     bool     `json:"use_qk_norm"`
	MoEInter   int      `json:"moe_intermediate_size"`
	Routed     int      `json:"n_routed_experts"`
	Shared     *int     `json:"n_shared_experts"`
	TopK       int      `json:"num_experts_per_tok"`
	NormTopK   *bool    `json:"norm_topk_prob"`
	Scale      float64  `json:"routed_scaling_factor"`
	NGroup     int      `json:"n_group"`
	TopKGroup  int      `json:"topk_group"`
	FirstDense *int     `json:"first_k_dense_replace"`
	NextN      int      `json:"num_nextn_predict_layers"`
	TopKMethod string   `json:"topk_method"` // mlx-lm's spellings of the router
	Scoring    string   `json:"scoring_func"`

	rotary, dense, shared int // resolved with transformers' defaults
}

// glm4MoEKeys are the keys Glm4MoeConfig reads, with transformers v5's
// rope_parameters and layer_types (every layer full attention).
var glm4MoEKeys = []string{
	"hidden_size", "num_hidden_layers", "intermediate_size", "num_attention_heads", "num_key_value_heads",
	"head_dim", "vocab_size", "rms_norm_eps", "rope_theta", "rope_scaling", "rope_parameters",
	"max_position_embeddings", "attention_bias", "hidden_act", "layer_types",
	"partial_rotary_factor", "use_qk_norm", "moe_intermediate_size", "n_routed_experts", "n_shared_experts",
	"num_experts_per_tok", "norm_topk_prob", "routed_scaling_factor", "n_group", "topk_group",
	"first_k_dense_replace", "num_nextn_predict_layers", "topk_method", "scoring_func",
}

func glm4MoEConfigOf(raw map[string]any) (*glm4MoEConfig, error) {
	if err := checkKeys(raw, glm4MoEKeys...); err != nil {
		return nil, err
	}
	var c glm4MoEConfig
	if err := decodeConfig(raw, &c); err != nil {
		return nil, err
	}
	if err := c.defaults(); err != nil {
		return nil, err
	}
	partial, key := 0.5, "partial_rotary_factor"
	if c.Partial != nil {
		partial = *c.Partial
	}
	if p := c.RopeParams; p != nil && p.PartialRotaryFactor != 0 {
		partial, key = p.PartialRotaryFactor, "rope_parameters.partial_rotary_factor"
	}
	c.rotary = int(float64(c.HeadDim) * partial)
	if partial <= 0 || partial > 1 || c.rotary <= 0 || c.rotary%2 != 0 {
		return nil, fmt.Errorf("config.json: %s %v gives %d rotary dims of head_dim %d", key, partial, c.rotary, c.HeadDim)
	}
	if c.TopKMethod != "" && c.TopKMethod != "noaux_tc" {
		return nil, fmt.Errorf("config.json: topk_method %q is not supported (GLM's router is noaux_tc)", c.TopKMethod)
	}
	if c.Scoring != "" && c.Scoring != "sigmoid" {
		return nil, fmt.Errorf("config.json: scoring_func %q is not supported (GLM's router is sigmoid)", c.Scoring)
	}
	if c.Routed <= 0 || c.MoEInter <= 0 {
		return nil, fmt.Errorf("config.json needs positive n_routed_experts and moe_intermediate_size")
	}
	if c.TopK <= 0 || c.TopK > c.Routed {
		return nil, fmt.Errorf("config.json: num_experts_per_tok %d must be between 1 and n_routed_experts %d", c.TopK, c.Routed)
	}
	c.NGroup, c.TopKGroup = positive(c.NGroup, 1), positive(c.TopKGroup, 1)
	if c.NGroup < 0 || c.Routed%c.NGroup != 0 || c.TopKGroup < 0 || c.TopKGroup > c.NGroup ||
		(c.NGroup > 1 && (c.Routed/c.NGroup < 2 || c.TopK > c.TopKGroup*(c.Routed/c.NGroup))) {
		return nil, fmt.Errorf("config.json: n_group %d, topk_group %d do not split n_routed_experts %d into groups that can hold num_experts_per_tok %d",
			c.NGroup, c.TopKGroup, c.Routed, c.TopK)
	}
	c.Scale = positive(c.Scale, 1)
	c.dense, c.shared = 1, 1 // transformers' defaults
	if c.FirstDense != nil {
		c.dense = *c.FirstDense
	}
	if c.Shared != nil {
		c.shared = *c.Shared
	}
	if c.dense < 0 || c.shared < 0 || c.NextN < 0 {
		return nil, fmt.Errorf("config.json: first_k_dense_replace %d, n_shared_experts %d and num_nextn_predict_layers %d must not be negative", c.dense, c.shared, c.NextN)
	}
	return &c, nil
}

func newGLM4MoE(raw map[string]any, w *nn.Weights) (Model, error) {
	c, err := glm4MoEConfigOf(raw)
	if err != nil {
		return nil, err
	}
	rope, err := nn.NewRoPE(c.rotary, c.RopeTheta, false, c.RopeScaling, c.MaxPos)
	if err != nil {
		return nil, err
	}
	lc := c.llamaConfig
	lc.AttnBias = false // the bias buildLlama gives o_proj; GLM's q, k, v have theirs below
	names := moeNames{router: "gate", gate: "gate_proj", up: "up_proj", down: "down_proj"}
	layer := 0
	m := buildLlama(w, &lc, rope, "glm4_moe", func(p string, a *attention) block {
		i := layer
		layer++
		a.qkv = newQKV(w, p, c.Hidden, c.Heads, c.KVHeads, c.HeadDim, c.AttnBias)
		if c.QKNorm {
			a.qNorm = w.RMSNorm(p+"self_attn.q_norm", c.HeadDim, c.Eps, false)
			a.kNorm = w.RMSNorm(p+"self_attn.k_norm", c.HeadDim, c.Eps, false)
		}
		if i < c.dense {
			mlp := newGatedMLP(w, p, c.Hidden, c.Intermediate, false, mlx.SwiGLU)
			return &mlp
		}
		moe := newSparseMoE(w, p+"mlp.", names, c.Hidden, c.MoEInter, c.Routed, c.TopK, c.NormTopK == nil || *c.NormTopK)
		moe.sigmoid, moe.routedScale = true, c.Scale
		moe.scoreBias = w.Array(p+"mlp.gate.e_score_correction_bias", c.Routed)
		moe.groups, moe.topGroups = c.NGroup, c.TopKGroup
		if c.shared > 0 {
			sh := loadGatedMLP(w, p+"mlp.shared_experts.", c.Hidden, c.MoEInter*c.shared, false, mlx.SwiGLU)
			moe.shared = &sh
		}
		return moe
	})
	for i := 0; i < c.NextN; i++ {
		w.Ignore(fmt.Sprintf("model.layers.%d.", c.Layers+i))
	}
	return m, nil
}

// glm4MoEInactive is what a token never reads: the experts it is not
// routed to in every sparse layer, and the whole multi-token-prediction
// layers, which this graph does not run (profile.Family.Inactive).
func glm4MoEInactive(cfg *profile.Config) int64 {
	c, err := glm4MoEConfigOf(cfg.Raw)
	if err != nil {
		return 0
	}
	h, d := int64(c.Hidden), int64(c.HeadDim)
	q, kv := int64(c.Heads)*d, int64(c.KVHeads)*d
	n := skippedExperts(max(c.Layers-c.dense, 0), c.Routed, c.TopK, c.Hidden, c.MoEInter)
	// one prediction layer: a sparse decoder layer, its eh_proj ([h, 2h])
	// and its enorm, hnorm and shared_head.norm
	mtp := h*(q+2*kv) + q*h + 2*h + 2*h*h + 3*h
	if c.AttnBias {
		mtp += q + 2*kv
	}
	if c.QKNorm {
		mtp += 2 * d
	}
	e, mi := int64(c.Routed), int64(c.MoEInter)
	mtp += e*h + e + (e+int64(c.shared))*3*h*mi
	return n + int64(c.NextN)*mtp
}
