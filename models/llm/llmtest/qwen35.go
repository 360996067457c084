package llmtest

import "fmt"

// Qwen35 is a Qwen3.5 checkpoint: linear-attention (Gated DeltaNet) and
// full-attention layers alternating, 2 key heads and 4 value heads of 16
// in the linear layers, partial rotary 0.5. experts 0 writes the dense
// qwen3_5; otherwise qwen3_5_moe with s.Hidden/2 per expert and a
// shared expert. The layout is Hugging Face's release (model.language_model.*,
// (1 + w) norms, conv1d [C, 1, K], fused experts), or with mlx true
// mlx-lm's conversion (language_model.model.*, norms with the one added,
// conv1d [C, K, 1], experts under switch_mlp, which it can quantize).
func Qwen35(s Shape, experts, topK int, mlx bool) Model {
	const kHeads, vHeads, kDim, vDim, kernel = 2, 4, 16, 16, 4
	types := make([]string, s.Layers)
	for i := range types {
		types[i] = "linear_attention"
		if i%2 == 1 {
			types[i] = "full_attention"
		}
	}
	text := map[string]any{
		"model_type": "qwen3_5_text", "hidden_size": s.Hidden, "num_hidden_layers": s.Layers,
		"intermediate_size": s.Intermediate, "num_attention_heads": s.Heads, "num_key_value_heads": s.KVHeads,
		"head_dim": s.HeadDim, "vocab_size": s.Vocab, "rms_norm_eps": 1e-6, "max_position_embeddings": 4096,
		"hidden_act": "silu", "eos_token_id": 2, "attn_output_gate": true, "full_attention_interval": 2,
		"layer_types": types, "linear_conv_kernel_dim": kernel, "linear_key_head_dim": kDim,
		"linear_value_head_dim": vDim, "linear_num_key_heads": kHeads, "linear_num_value_heads": vHeads,
		"tie_word_embeddings": false, "partial_rotary_factor": 0.5, "mamba_ssm_dtype": "float32",
		"rope_parameters": map[string]any{"rope_type": "default", "rope_theta": 1e6, "partial_rotary_factor": 0.5,
			"mrope_section": []int{s.HeadDim / 8, s.HeadDim / 8, 0}, "mrope_interleaved": true},
	}
	arch, mt := "Qwen3_5ForConditionalGeneration", "qwen3_5"
	inter := s.Hidden / 2 // a multiple of the group size, so mlx-lm quantizes down_proj too
	if experts > 0 {
		arch, mt = "Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe"
		text["model_type"] = "qwen3_5_moe_text"
		for k, v := range map[string]any{"num_experts": experts, "num_experts_per_tok": topK, "moe_intermediate_size": inter,
			"shared_expert_intermediate_size": inter} {
			text[k] = v
		}
		delete(text, "intermediate_size")
	}
	cfg := map[string]any{"architectures": []string{arch}, "model_type": mt, "text_config": text, "tie_word_embeddings": false,
		"language_model_only": false, "image_token_id": 7, "vision_config": map[string]any{"model_type": "qwen3_5_vit"}}
	pre, head, norm, conv := "model.language_model.", "lm_head.weight", NormDelta, []int{2*kHeads*kDim + vHeads*vDim, 1, kernel}
	if mlx {
		pre, head, norm, conv = "language_model.model.", "language_model.lm_head.weight", Norm, []int{conv[0], kernel, 1}
	}
	vec := func(name string, k Kind, n ...int) Tensor { return Tensor{Name: name, Shape: n, Kind: k} }
	ts := []Tensor{{Name: pre + "embed_tokens.weight", Shape: []int{s.Vocab, s.Hidden}, Kind: Embedding}}
	for i := 0; i < s.Layers; i++ {
		p := fmt.Sprintf("%slayers.%d.", pre, i)
		ts = append(ts, vec(p+"input_layernorm.weight", norm, s.Hidden), vec(p+"post_attention_layernorm.weight", norm, s.Hidden))
		if types[i] == "linear_attention" {
			a := p + "linear_attn."
			ts = append(ts,
				mat(a+"in_proj_qkv.weight", conv[0], s.Hidden),
				mat(a+"in_proj_z.weight", vHeads*vDim, s.Hidden),
				mat(a+"in_proj_b.weight", vHeads, s.Hidden),
				mat(a+"in_proj_a.weight", vHeads, s.Hidden),
				mat(a+"out_proj.weight", s.Hidden, vHeads*vDim),
				vec(a+"conv1d.weight", Bias, conv...),
				vec(a+"A_log", Bias, vHeads), vec(a+"dt_bias", Norm, vHeads),
				vec(a+"norm.weight", Norm, vDim))
		} else {
			a := p + "self_attn."
			ts = append(ts,
				mat(a+"q_proj.weight", 2*s.Heads*s.HeadDim, s.Hidden),
				mat(a+"k_proj.weight", s.KVHeads*s.HeadDim, s.Hidden),
				mat(a+"v_proj.weight", s.KVHeads*s.HeadDim, s.Hidden),
				mat(a+"o_proj.weight", s.Hidden, s.Heads*s.HeadDim),
				vec(a+"q_norm.weight", norm, s.HeadDim), vec(a+"k_norm.weight", norm, s.HeadDim))
		}
		m := p + "mlp."
		if experts == 0 {
			ts = append(ts, mat(m+"gate_proj.weight", s.Intermediate, s.Hidden), mat(m+"up_proj.weight", s.Intermediate, s.Hidden),
				mat(m+"down_proj.weight", s.Hidden, s.Intermediate))
			continue
		}
		ts = append(ts, mat(m+"gate.weight", experts, s.Hidden),
			mat(m+"shared_expert.gate_proj.weight", inter, s.Hidden), mat(m+"shared_expert.up_proj.weight", inter, s.Hidden),
			mat(m+"shared_expert.down_proj.weight", s.Hidden, inter), mat(m+"shared_expert_gate.weight", 1, s.Hidden))
		if mlx {
			for _, n := range []struct {
				name    string
				out, in int
			}{{"gate_proj", inter, s.Hidden}, {"up_proj", inter, s.Hidden}, {"down_proj", s.Hidden, inter}} {
				ts = append(ts, Tensor{Name: m + "switch_mlp." + n.name + ".weight", Shape: []int{experts, n.out, n.in}, Kind: Matrix})
			}
			continue
		}
		ts = append(ts, Tensor{Name: m + "experts.gate_up_proj", Shape: []int{experts, 2 * inter, s.Hidden}, Kind: Stacked},
			Tensor{Name: m + "experts.down_proj", Shape: []int{experts, s.Hidden, inter}, Kind: Stacked})
	}
	ts = append(ts, vec(pre+"norm.weight", norm, s.Hidden), mat(head, s.Vocab, s.Hidden))
	return Model{Config: cfg, Tensors: ts}
}
