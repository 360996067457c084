package llmtest

import "fmt"

// Gemma4 is a Gemma 4 text tower in the release layout (config under
// text_config, weights under model.language_model.), one layer per entry
// of types ("sliding_attention" or "full_attention"). Sliding layers have
// s's head_dim and kv heads; full layers twice the head_dim, one kv head
// and no v_proj (attention_k_eq_v), with proportional RoPE turning a
// quarter of the pairs. The last shared layers share keys and values
// (num_kv_shared_layers); when sharedWeights, they still carry k/v
// weights as some exports do, written after every other tensor so that
// changing them leaves the rest of the model's values alone.
func Gemma4(s Shape, window int, types []string, shared int, sharedWeights bool) Model {
	global := 2 * s.HeadDim
	text := map[string]any{
		"model_type": "gemma4_text", "hidden_size": s.Hidden, "num_hidden_layers": len(types),
		"intermediate_size": s.Intermediate, "num_attention_heads": s.Heads, "num_key_value_heads": s.KVHeads,
		"num_global_key_value_heads": 1, "head_dim": s.HeadDim, "global_head_dim": global,
		"vocab_size": s.Vocab, "rms_norm_eps": 1e-6, "sliding_window": window, "layer_types": types,
		"max_position_embeddings": 4096, "hidden_activation": "gelu_pytorch_tanh", "final_logit_softcapping": 30.0,
		"attention_k_eq_v": true, "num_kv_shared_layers": shared, "hidden_size_per_layer_input": 0,
		"enable_moe_block": false, "use_double_wide_mlp": false, "eos_token_id": []int{1, 106},
		"rope_parameters": map[string]any{
			"full_attention":    map[string]any{"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6},
			"sliding_attention": map[string]any{"rope_type": "default", "rope_theta": 1e4},
		},
	}
	cfg := map[string]any{"architectures": []string{"Gemma4ForConditionalGeneration"}, "model_type": "gemma4",
		"text_config": text, "vision_config": nil, "audio_config": nil, "tie_word_embeddings": true}
	pre := "model.language_model."
	ts := []Tensor{{Name: pre + "embed_tokens.weight", Shape: []int{s.Vocab, s.Hidden}, Kind: Embedding}}
	norm := func(name string, n int) Tensor { return Tensor{Name: name, Shape: []int{n}, Kind: Norm} }
	var late []Tensor
	first := len(types) - shared
	for i, kind := range types {
		p := fmt.Sprintf("%slayers.%d.", pre, i)
		d, kv := s.HeadDim, s.KVHeads
		if kind == "full_attention" {
			d, kv = global, 1
		}
		ts = append(ts,
			norm(p+"input_layernorm.weight", s.Hidden),
			mat(p+"self_attn.q_proj.weight", s.Heads*d, s.Hidden),
			norm(p+"self_attn.q_norm.weight", d),
			mat(p+"self_attn.o_proj.weight", s.Hidden, s.Heads*d),
			norm(p+"post_attention_layernorm.weight", s.Hidden),
			norm(p+"pre_feedforward_layernorm.weight", s.Hidden),
			norm(p+"post_feedforward_layernorm.weight", s.Hidden),
			mat(p+"mlp.gate_proj.weight", s.Intermediate, s.Hidden),
			mat(p+"mlp.up_proj.weight", s.Intermediate, s.Hidden),
			mat(p+"mlp.down_proj.weight", s.Hidden, s.Intermediate),
			norm(p+"layer_scalar", 1),
		)
		kvs := []Tensor{mat(p+"self_attn.k_proj.weight", kv*d, s.Hidden), norm(p+"self_attn.k_norm.weight", d)}
		if kind != "full_attention" {
			kvs = append(kvs, mat(p+"self_attn.v_proj.weight", kv*d, s.Hidden))
		}
		switch {
		case i < first:
			ts = append(ts, kvs...)
		case sharedWeights:
			late = append(late, kvs...)
		}
	}
	ts = append(ts, norm(pre+"norm.weight", s.Hidden))
	return Model{Config: cfg, Tensors: append(ts, late...)}
}

// WithPerLayer gives a Gemma4 model per-layer embeddings of p features
// (hidden_size_per_layer_input, as E2B/E4B), their tensors written after
// all the others.
func WithPerLayer(m Model, s Shape, p int) Model {
	text := map[string]any{}
	for k, v := range m.Config["text_config"].(map[string]any) {
		text[k] = v
	}
	layers := text["num_hidden_layers"].(int)
	text["hidden_size_per_layer_input"] = p
	text["vocab_size_per_layer_input"] = s.Vocab
	cfg := map[string]any{}
	for k, v := range m.Config {
		cfg[k] = v
	}
	cfg["text_config"] = text
	pre := "model.language_model."
	ts := append([]Tensor(nil), m.Tensors...)
	ts = append(ts,
		Tensor{Name: pre + "embed_tokens_per_layer.weight", Shape: []int{s.Vocab, layers * p}, Kind: Embedding},
		mat(pre+"per_layer_model_projection.weight", layers*p, s.Hidden),
		Tensor{Name: pre + "per_layer_projection_norm.weight", Shape: []int{p}, Kind: Norm})
	for i := 0; i < layers; i++ {
		lp := fmt.Sprintf("%slayers.%d.", pre, i)
		ts = append(ts,
			mat(lp+"per_layer_input_gate.weight", p, s.Hidden),
			mat(lp+"per_layer_projection.weight", s.Hidden, p),
			Tensor{Name: lp + "post_per_layer_input_norm.weight", Shape: []int{s.Hidden}, Kind: Norm})
	}
	return Model{Config: cfg, Tensors: ts}
}

// WithMoE gives every layer of a Gemma4 model a mixture-of-experts block
// beside its MLP (enable_moe_block, as 26B-A4B), experts of
// s.Intermediate stacked as mlx-lm writes them
// (experts.switch_glu.{gate,up,down}_proj), their tensors written after
// all the others.
func WithMoE(m Model, s Shape, experts, topK int) Model {
	text := map[string]any{}
	for k, v := range m.Config["text_config"].(map[string]any) {
		text[k] = v
	}
	layers := text["num_hidden_layers"].(int)
	text["enable_moe_block"] = true
	text["num_experts"] = experts
	text["top_k_experts"] = topK
	text["moe_intermediate_size"] = s.Intermediate
	cfg := map[string]any{}
	for k, v := range m.Config {
		cfg[k] = v
	}
	cfg["text_config"] = text
	ts := append([]Tensor(nil), m.Tensors...)
	norm := func(name string, n int) Tensor { return Tensor{Name: name, Shape: []int{n}, Kind: Norm} }
	for i := 0; i < layers; i++ {
		p := fmt.Sprintf("model.language_model.layers.%d.", i)
		ts = append(ts,
			mat(p+"router.proj.weight", experts, s.Hidden),
			norm(p+"router.scale", s.Hidden),
			norm(p+"router.per_expert_scale", experts),
			norm(p+"pre_feedforward_layernorm_2.weight", s.Hidden),
			norm(p+"post_feedforward_layernorm_1.weight", s.Hidden),
			norm(p+"post_feedforward_layernorm_2.weight", s.Hidden),
			Tensor{Name: p + "experts.switch_glu.gate_proj.weight", Shape: []int{experts, s.Intermediate, s.Hidden}, Kind: Matrix},
			Tensor{Name: p + "experts.switch_glu.up_proj.weight", Shape: []int{experts, s.Intermediate, s.Hidden}, Kind: Matrix},
			Tensor{Name: p + "experts.switch_glu.down_proj.weight", Shape: []int{experts, s.Hidden, s.Intermediate}, Kind: Matrix})
	}
	return Model{Config: cfg, Tensors: ts}
}
