package llmtest

import (
	"fmt"
	"strings"
)

// GptOSS is a GPT-OSS checkpoint in Hugging Face's float layout:
// alternating sliding (window) and full layers, sinks, biases everywhere,
// float experts gate_up_proj [E, H, 2I] (interleaved) and down_proj
// [E, I, H], YaRN with the given truncate.
func GptOSS(s Shape, window, experts, topK int, truncate bool) Model {
	cfg := baseConfig(s, "GptOssForCausalLM", "gpt_oss")
	types := make([]string, s.Layers)
	for i := range types {
		types[i] = "sliding_attention"
		if i%2 == 1 {
			types[i] = "full_attention"
		}
	}
	for k, v := range map[string]any{
		"tie_word_embeddings": false, "attention_bias": true, "num_local_experts": experts, "num_experts_per_tok": topK,
		"experts_per_token": topK, "layer_types": types, "sliding_window": window, "swiglu_limit": 7.0,
		"initial_context_length": 64, "rope_theta": 150000.0,
		"rope_scaling": map[string]any{"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 64,
			"beta_fast": 32.0, "beta_slow": 1.0, "truncate": truncate},
	} {
		cfg[k] = v
	}
	bias := func(name string, n ...int) Tensor { return Tensor{Name: name, Shape: n, Kind: Bias} }
	ts := []Tensor{{Name: "model.embed_tokens.weight", Shape: []int{s.Vocab, s.Hidden}, Kind: Embedding}}
	q, kv := s.Heads*s.HeadDim, s.KVHeads*s.HeadDim
	for i := 0; i < s.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		a, e := p+"self_attn.", p+"mlp.experts."
		ts = append(ts,
			Tensor{Name: p + "input_layernorm.weight", Shape: []int{s.Hidden}, Kind: Norm},
			Tensor{Name: p + "post_attention_layernorm.weight", Shape: []int{s.Hidden}, Kind: Norm},
			mat(a+"q_proj.weight", q, s.Hidden), bias(a+"q_proj.bias", q),
			mat(a+"k_proj.weight", kv, s.Hidden), bias(a+"k_proj.bias", kv),
			mat(a+"v_proj.weight", kv, s.Hidden), bias(a+"v_proj.bias", kv),
			mat(a+"o_proj.weight", s.Hidden, q), bias(a+"o_proj.bias", s.Hidden),
			bias(a+"sinks", s.Heads),
			mat(p+"mlp.router.weight", experts, s.Hidden), bias(p+"mlp.router.bias", experts),
			Tensor{Name: e + "gate_up_proj", Shape: []int{experts, s.Hidden, 2 * s.Intermediate}, Kind: InOut},
			bias(e+"gate_up_proj_bias", experts, 2*s.Intermediate),
			Tensor{Name: e + "down_proj", Shape: []int{experts, s.Intermediate, s.Hidden}, Kind: InOut},
			bias(e+"down_proj_bias", experts, s.Hidden),
		)
	}
	ts = append(ts, Tensor{Name: "model.norm.weight", Shape: []int{s.Hidden}, Kind: Norm}, mat("lm_head.weight", s.Vocab, s.Hidden))
	mlxLayout := Model{Config: cfg, Tensors: gptOSSMLXTensors(ts, s, experts)}
	return Model{Config: cfg, Tensors: ts, MLXLayout: &mlxLayout}
}

// gptOSSMLXTensors rewrites Hugging Face's GPT-OSS tensors into the layout
// mlx-lm's sanitize gives them (and so every mlx-community checkpoint):
// the experts as SwitchGLU modules mlp.experts.{gate,up,down}_proj with
// .weight [E, out, in] and .bias, gate and up apart rather than
// interleaved. Everything else keeps its name.
func gptOSSMLXTensors(hf []Tensor, s Shape, experts int) []Tensor {
	var ts []Tensor
	for _, t := range hf {
		e, ok := strings.CutSuffix(t.Name, "gate_up_proj")
		switch {
		case ok:
			ts = append(ts,
				Tensor{Name: e + "gate_proj.weight", Shape: []int{experts, s.Intermediate, s.Hidden}, Kind: Matrix},
				Tensor{Name: e + "up_proj.weight", Shape: []int{experts, s.Intermediate, s.Hidden}, Kind: Matrix})
		case strings.HasSuffix(t.Name, "gate_up_proj_bias"):
			e := strings.TrimSuffix(t.Name, "gate_up_proj_bias")
			ts = append(ts,
				Tensor{Name: e + "gate_proj.bias", Shape: []int{experts, s.Intermediate}, Kind: Bias},
				Tensor{Name: e + "up_proj.bias", Shape: []int{experts, s.Intermediate}, Kind: Bias})
		case strings.HasSuffix(t.Name, "experts.down_proj"):
			ts = append(ts, Tensor{Name: t.Name + ".weight", Shape: []int{experts, s.Hidden, s.Intermediate}, Kind: Matrix})
		case strings.HasSuffix(t.Name, "down_proj_bias"):
			ts = append(ts, Tensor{Name: strings.TrimSuffix(t.Name, "_bias") + ".bias", Shape: t.Shape, Kind: Bias})
		default:
			ts = append(ts, t)
		}
	}
	return ts
}
