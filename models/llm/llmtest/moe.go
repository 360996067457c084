package llmtest

import "fmt"

// MoE is a mixture-of-experts checkpoint: family "qwen3_moe" (q/k norms,
// mlp.gate and mlp.experts.N.{gate,up,down}_proj, norm_topk_prob) or
// "mixtral" (block_sparse_moe.gate and experts.N.{w1,w3,w2}), with
// s.Intermediate per expert. stacked writes the experts as mlx-lm does,
// one [experts, out, in] tensor per projection under switch_mlp. dense
// lists qwen3_moe layers that keep a plain MLP (mlp_only_layers).
func MoE(s Shape, family string, experts, topK int, stacked bool, dense ...int) Model {
	arch := map[string]string{"qwen3_moe": "Qwen3MoeForCausalLM", "mixtral": "MixtralForCausalLM"}[family]
	cfg := baseConfig(s, arch, family)
	cfg["tie_word_embeddings"] = false
	cfg["num_experts_per_tok"] = topK
	block, names := "block_sparse_moe.", [3]string{"w1", "w3", "w2"}
	if family == "qwen3_moe" {
		block, names = "mlp.", [3]string{"gate_proj", "up_proj", "down_proj"}
		cfg["num_experts"] = experts
		cfg["moe_intermediate_size"] = s.Intermediate
		cfg["norm_topk_prob"] = true
		cfg["decoder_sparse_step"] = 1
		cfg["mlp_only_layers"] = append([]int{}, dense...)
	} else {
		cfg["num_local_experts"] = experts
	}
	stackedNames := [3]string{"gate_proj", "up_proj", "down_proj"}
	ts := []Tensor{{Name: "model.embed_tokens.weight", Shape: []int{s.Vocab, s.Hidden}, Kind: Embedding}}
	for i := 0; i < s.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		ts = append(ts,
			Tensor{Name: p + "input_layernorm.weight", Shape: []int{s.Hidden}, Kind: Norm},
			mat(p+"self_attn.q_proj.weight", s.Heads*s.HeadDim, s.Hidden),
			mat(p+"self_attn.k_proj.weight", s.KVHeads*s.HeadDim, s.Hidden),
			mat(p+"self_attn.v_proj.weight", s.KVHeads*s.HeadDim, s.Hidden),
			mat(p+"self_attn.o_proj.weight", s.Hidden, s.Heads*s.HeadDim),
			Tensor{Name: p + "post_attention_layernorm.weight", Shape: []int{s.Hidden}, Kind: Norm},
		)
		if family == "qwen3_moe" {
			ts = append(ts,
				Tensor{Name: p + "self_attn.q_norm.weight", Shape: []int{s.HeadDim}, Kind: Norm},
				Tensor{Name: p + "self_attn.k_norm.weight", Shape: []int{s.HeadDim}, Kind: Norm})
		}
		if contains(dense, i) {
			ts = append(ts,
				mat(p+"mlp.gate_proj.weight", s.Intermediate, s.Hidden),
				mat(p+"mlp.up_proj.weight", s.Intermediate, s.Hidden),
				mat(p+"mlp.down_proj.weight", s.Hidden, s.Intermediate))
			continue
		}
		ts = append(ts, mat(p+block+"gate.weight", experts, s.Hidden))
		shapes := [3][2]int{{s.Intermediate, s.Hidden}, {s.Intermediate, s.Hidden}, {s.Hidden, s.Intermediate}}
		for j, sh := range shapes {
			if stacked {
				ts = append(ts, Tensor{Name: p + block + "switch_mlp." + stackedNames[j] + ".weight", Shape: []int{experts, sh[0], sh[1]}, Kind: Matrix})
				continue
			}
			for e := 0; e < experts; e++ {
				ts = append(ts, mat(fmt.Sprintf("%s%sexperts.%d.%s.weight", p, block, e, names[j]), sh[0], sh[1]))
			}
		}
	}
	ts = append(ts, Tensor{Name: "model.norm.weight", Shape: []int{s.Hidden}, Kind: Norm}, mat("lm_head.weight", s.Vocab, s.Hidden))
	return Model{Config: cfg, Tensors: ts}
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
