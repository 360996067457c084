package llmtest

import "fmt"

// GLM4MoeLite is a GLM-4.x MoE Lite checkpoint (GLM-4.7-Flash's
// glm4_moe_lite): DeepseekV2's tensors under GLM's config keys, each MoE
// layer's router with its e_score_correction_bias, and one
// multi-token-prediction layer after the last (num_nextn_predict_layers),
// which a text model skips.
func GLM4MoeLite(s Shape, qLora, experts, topK int) Model {
	m := DeepseekV2(s, qLora, experts, topK)
	cfg := map[string]any{}
	for k, v := range m.Config {
		cfg[k] = v
	}
	for _, k := range []string{"scoring_func", "moe_layer_freq", "rope_scaling", "rope_theta"} {
		delete(cfg, k)
	}
	for k, v := range map[string]any{
		"architectures": []string{"Glm4MoeLiteForCausalLM"}, "model_type": "glm4_moe_lite",
		"topk_method": "noaux_tc", "norm_topk_prob": true, "routed_scaling_factor": 1.8,
		"num_nextn_predict_layers": 1, "partial_rotary_factor": 1.0, "rope_interleave": true,
		"rope_parameters": map[string]any{"rope_type": "default", "rope_theta": 10000.0},
	} {
		cfg[k] = v
	}
	ts := append([]Tensor(nil), m.Tensors...)
	for i := 1; i < s.Layers; i++ {
		ts = append(ts, Tensor{Name: fmt.Sprintf("model.layers.%d.mlp.gate.e_score_correction_bias", i), Shape: []int{experts}, Kind: Bias})
	}
	mtp := fmt.Sprintf("model.layers.%d.", s.Layers)
	ts = append(ts, mat(mtp+"eh_proj.weight", s.Hidden, 2*s.Hidden), Tensor{Name: mtp + "enorm.weight", Shape: []int{s.Hidden}, Kind: Norm},
		mat(mtp+"self_attn.kv_a_proj_with_mqa.weight", s.Hidden/2+s.HeadDim/2, s.Hidden))
	return Model{Config: cfg, Tensors: ts}
}
