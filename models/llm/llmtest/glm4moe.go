package llmtest

import "fmt"

// GLM4Moe is a GLM-4.5-style checkpoint (glm4_moe): grouped-query
// attention with q/k/v biases (and q/k norms when qkNorm), half of each
// head rotated, layer 0 dense and the rest mixtures of experts a third of
// s.Intermediate wide with a router bias (e_score_correction_bias) and
// one shared expert, and one multi-token-prediction layer after the last
// (num_nextn_predict_layers), which a text model skips. Its MLXLayout is
// the same weights as mlx-lm converts them: experts stacked under
// switch_mlp and the prediction layer dropped.
func GLM4Moe(s Shape, experts, topK int, qkNorm bool) Model {
	cfg := baseConfig(s, "Glm4MoeForCausalLM", "glm4_moe")
	for k, v := range map[string]any{
		"tie_word_embeddings": false, "partial_rotary_factor": 0.5, "attention_bias": true, "use_qk_norm": qkNorm,
		"moe_intermediate_size": s.Intermediate / 3, "n_routed_experts": experts, "n_shared_experts": 1,
		"num_experts_per_tok": topK, "norm_topk_prob": true, "routed_scaling_factor": 1.8, "n_group": 1, "topk_group": 1,
		"first_k_dense_replace": 1, "num_nextn_predict_layers": 1, "rope_scaling": nil,
	} {
		cfg[k] = v
	}
	hf := []Tensor{{Name: "model.embed_tokens.weight", Shape: []int{s.Vocab, s.Hidden}, Kind: Embedding}}
	mlx := append([]Tensor(nil), hf...)
	for i := 0; i < s.Layers; i++ {
		hf = append(hf, glmLayer(s, i, experts, qkNorm, false)...)
		mlx = append(mlx, glmLayer(s, i, experts, qkNorm, true)...)
	}
	tail := []Tensor{norm("model.norm.weight", s.Hidden), mat("lm_head.weight", s.Vocab, s.Hidden)}
	hf, mlx = append(hf, tail...), append(mlx, tail...)
	// the prediction layer comes last, so both layouts draw the same
	// values for every tensor they share
	mtp := fmt.Sprintf("model.layers.%d.", s.Layers)
	hf = append(append(hf, glmLayer(s, s.Layers, experts, qkNorm, false)...), mat(mtp+"eh_proj.weight", s.Hidden, 2*s.Hidden),
		norm(mtp+"enorm.weight", s.Hidden), norm(mtp+"hnorm.weight", s.Hidden), norm(mtp+"shared_head.norm.weight", s.Hidden))
	return Model{Config: cfg, Tensors: hf, MLXLayout: &Model{Config: cfg, Tensors: mlx}}
}

// glmLayer is layer i's tensors; stacked writes the experts as mlx-lm
// does, one [experts, out, in] tensor per projection, which draws the
// values of the per-expert tensors in the same order.
func glmLayer(s Shape, i, experts int, qkNorm, stacked bool) []Tensor {
	p := fmt.Sprintf("model.layers.%d.", i)
	a := p + "self_attn."
	q, kv := s.Heads*s.HeadDim, s.KVHeads*s.HeadDim
	ts := []Tensor{norm(p+"input_layernorm.weight", s.Hidden),
		mat(a+"q_proj.weight", q, s.Hidden), {Name: a + "q_proj.bias", Shape: []int{q}, Kind: Bias},
		mat(a+"k_proj.weight", kv, s.Hidden), {Name: a + "k_proj.bias", Shape: []int{kv}, Kind: Bias},
		mat(a+"v_proj.weight", kv, s.Hidden), {Name: a + "v_proj.bias", Shape: []int{kv}, Kind: Bias},
		mat(a+"o_proj.weight", s.Hidden, q), norm(p+"post_attention_layernorm.weight", s.Hidden)}
	if qkNorm {
		ts = append(ts, norm(a+"q_norm.weight", s.HeadDim), norm(a+"k_norm.weight", s.HeadDim))
	}
	if i == 0 {
		return append(ts, mat(p+"mlp.gate_proj.weight", s.Intermediate, s.Hidden), mat(p+"mlp.up_proj.weight", s.Intermediate, s.Hidden),
			mat(p+"mlp.down_proj.weight", s.Hidden, s.Intermediate))
	}
	inter := s.Intermediate / 3
	ts = append(ts, mat(p+"mlp.gate.weight", experts, s.Hidden),
		Tensor{Name: p + "mlp.gate.e_score_correction_bias", Shape: []int{experts}, Kind: Bias},
		mat(p+"mlp.shared_experts.gate_proj.weight", inter, s.Hidden), mat(p+"mlp.shared_experts.up_proj.weight", inter, s.Hidden),
		mat(p+"mlp.shared_experts.down_proj.weight", s.Hidden, inter))
	for _, proj := range []struct {
		name    string
		out, in int
	}{{"gate_proj", inter, s.Hidden}, {"up_proj", inter, s.Hidden}, {"down_proj", s.Hidden, inter}} {
		if stacked {
			ts = append(ts, Tensor{Name: p + "mlp.switch_mlp." + proj.name + ".weight", Shape: []int{experts, proj.out, proj.in}, Kind: Matrix})
			continue
		}
		for e := 0; e < experts; e++ {
			ts = append(ts, mat(fmt.Sprintf("%smlp.experts.%d.%s.weight", p, e, proj.name), proj.out, proj.in))
		}
	}
	return ts
}

func norm(name string, n int) Tensor { return Tensor{Name: name, Shape: []int{n}, Kind: Norm} }
