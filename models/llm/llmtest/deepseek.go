package llmtest

import "fmt"

// DeepseekV2 is a DeepSeek-V2 checkpoint: multi-head latent attention
// (qLora 0 writes V2-Lite's direct q_proj), layer 0 dense and the rest
// mixtures of experts with one shared expert. s.HeadDim is the nope head
// size; the rope part is half of it, the latent rank s.Hidden/2, the
// experts a third of s.Intermediate wide.
func DeepseekV2(s Shape, qLora, experts, topK int) Model {
	nope, rope, v, kvLora := s.HeadDim, s.HeadDim/2, s.HeadDim, s.Hidden/2
	cfg := baseConfig(s, "DeepseekV2ForCausalLM", "deepseek_v2")
	delete(cfg, "head_dim")
	for k, x := range map[string]any{
		"tie_word_embeddings": false, "kv_lora_rank": kvLora, "qk_nope_head_dim": nope, "qk_rope_head_dim": rope,
		"v_head_dim": v, "moe_intermediate_size": s.Intermediate / 3, "n_routed_experts": experts, "n_shared_experts": 1,
		"num_experts_per_tok": topK, "norm_topk_prob": false, "routed_scaling_factor": 1.5, "first_k_dense_replace": 1,
		"moe_layer_freq": 1, "topk_method": "greedy", "scoring_func": "softmax", "n_group": 1, "topk_group": 1,
		"num_key_value_heads": s.Heads,
		"rope_scaling": map[string]any{"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 256,
			"beta_fast": 32, "beta_slow": 1, "mscale": 0.707, "mscale_all_dim": 0.707},
	} {
		cfg[k] = x
	}
	if qLora > 0 {
		cfg["q_lora_rank"] = qLora
	} else {
		cfg["q_lora_rank"] = nil
	}
	norm := func(name string, n int) Tensor { return Tensor{Name: name, Shape: []int{n}, Kind: Norm} }
	ts := []Tensor{{Name: "model.embed_tokens.weight", Shape: []int{s.Vocab, s.Hidden}, Kind: Embedding}}
	for i := 0; i < s.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		a := p + "self_attn."
		ts = append(ts, norm(p+"input_layernorm.weight", s.Hidden), norm(p+"post_attention_layernorm.weight", s.Hidden),
			mat(a+"kv_a_proj_with_mqa.weight", kvLora+rope, s.Hidden), norm(a+"kv_a_layernorm.weight", kvLora),
			mat(a+"kv_b_proj.weight", s.Heads*(nope+v), kvLora), mat(a+"o_proj.weight", s.Hidden, s.Heads*v))
		if qLora > 0 {
			ts = append(ts, mat(a+"q_a_proj.weight", qLora, s.Hidden), norm(a+"q_a_layernorm.weight", qLora),
				mat(a+"q_b_proj.weight", s.Heads*(nope+rope), qLora))
		} else {
			ts = append(ts, mat(a+"q_proj.weight", s.Heads*(nope+rope), s.Hidden))
		}
		if i == 0 {
			ts = append(ts, mat(p+"mlp.gate_proj.weight", s.Intermediate, s.Hidden), mat(p+"mlp.up_proj.weight", s.Intermediate, s.Hidden),
				mat(p+"mlp.down_proj.weight", s.Hidden, s.Intermediate))
			continue
		}
		inter := s.Intermediate / 3
		ts = append(ts, mat(p+"mlp.gate.weight", experts, s.Hidden))
		for _, e := range append([]string{"shared_experts."}, expertPrefixes(experts)...) {
			ts = append(ts, mat(p+"mlp."+e+"gate_proj.weight", inter, s.Hidden), mat(p+"mlp."+e+"up_proj.weight", inter, s.Hidden),
				mat(p+"mlp."+e+"down_proj.weight", s.Hidden, inter))
		}
	}
	ts = append(ts, norm("model.norm.weight", s.Hidden), mat("lm_head.weight", s.Vocab, s.Hidden))
	return Model{Config: cfg, Tensors: ts}
}

func expertPrefixes(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("experts.%d.", i)
	}
	return out
}
