package llm_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
	"hark/models/profile"
)

func glm4Moe() llmtest.Model { return llmtest.GLM4Moe(llmtest.Tiny, 4, 2, true) }

// without returns m's config without key.
func without(m llmtest.Model, key string) llmtest.Model {
	cfg := map[string]any{}
	for k, v := range m.Config {
		if k != key {
			cfg[k] = v
		}
	}
	m.Config = cfg
	return m
}

// GLM-4.5's config is read as transformers reads it: absent keys take its
// defaults (half of each head rotated, one shared expert, one dense
// layer, renormalised weights), present ones change the model, and the
// multi-token-prediction layer is skipped only because
// num_nextn_predict_layers says there is one. mlx-lm's layout (stacked
// switch_mlp experts, no prediction layer) computes the same model.
func TestGLM4MoeConfigIsRead(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(10, llmtest.Tiny.Vocab)
	base := run(writeAndOpen(t, glm4Moe(), llmtest.Quant{}), ids)
	mlxLayout := run(writeAndOpen(t, *glm4Moe().MLXLayout, llmtest.Quant{}), ids)
	if d := maxDiff(base, mlxLayout); d > tol {
		t.Errorf("mlx-lm's layout differs from Hugging Face's by %g", d)
	}
	for _, key := range []string{"partial_rotary_factor", "n_shared_experts", "first_k_dense_replace", "norm_topk_prob", "n_group", "topk_group"} {
		if d := maxDiff(base, run(writeAndOpen(t, without(glm4Moe(), key), llmtest.Quant{}), ids)); d > tol {
			t.Errorf("without %s (its default) the model differs by %g", key, d)
		}
	}
	v5 := withConfig(without(without(glm4Moe(), "partial_rotary_factor"), "rope_theta"), "rope_parameters",
		map[string]any{"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5})
	if d := maxDiff(base, run(writeAndOpen(t, v5, llmtest.Quant{}), ids)); d > tol {
		t.Errorf("transformers v5's rope_parameters differ from the flat keys by %g", d)
	}
	for key, v := range map[string]any{"partial_rotary_factor": 1.0, "routed_scaling_factor": 1.0, "norm_topk_prob": false, "rope_theta": 500.0} {
		if d := maxDiff(base, run(writeAndOpen(t, withConfig(glm4Moe(), key, v), llmtest.Quant{}), ids)); d < 1e-4 {
			t.Errorf("%s %v changed the logits by only %g: not read", key, v, d)
		}
	}
	for _, c := range []struct {
		key  string
		v    any
		want string
	}{
		{"first_k_dense_replace", 2, "missing tensor model.layers.1.mlp.gate_proj.weight"},
		{"use_qk_norm", false, "unexpected tensors model.layers.0.self_attn.k_norm.weight"},
		{"attention_bias", false, "unexpected tensors model.layers.0.self_attn.k_proj.bias"},
		{"n_shared_experts", 0, "unexpected tensors model.layers.1.mlp.shared_experts"},
		{"num_nextn_predict_layers", 0, "unexpected tensors model.layers.2."},
	} {
		if err := openErr(t, withConfig(glm4Moe(), c.key, c.v)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want an error naming %s", c.key, c.v, err, c.want)
		}
	}
}

// The library lists GLM-4.5 as supported, and its active parameters are
// the checkpoint's less the experts a token skips in each MoE layer and
// less the whole prediction layer, counted here from the tensors written.
func TestGLM4MoeLibraryCountsActiveParams(t *testing.T) {
	const experts, topK = 8, 2
	gen := llmtest.GLM4Moe(llmtest.Tiny, experts, topK, true)
	js, _ := json.Marshal(gen.Config)
	cfg, err := profile.Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	if r := profile.Resolve(cfg); !r.Supported || r.Family != "glm4_moe" {
		t.Fatalf("library: %+v", r)
	}
	var total, active int64
	mtp := fmt.Sprintf("model.layers.%d.", llmtest.Tiny.Layers)
	for _, ten := range gen.Tensors {
		n := int64(1)
		for _, d := range ten.Shape {
			n *= int64(d)
		}
		total += n
		if !strings.HasPrefix(ten.Name, mtp) {
			active += n
		}
	}
	s := llmtest.Tiny
	active -= int64(s.Layers-1) * (experts - topK) * 3 * int64(s.Hidden) * int64(s.Intermediate/3)
	if got, ok := profile.ActiveParams(cfg, total); !ok || got != active {
		t.Errorf("active params %d (%v), want %d of %d", got, ok, active, total)
	}
}

// A GLM-4.5 config asking for what this graph does not build is refused
// naming the key, and a checkpoint missing a tensor, or in a layout this
// file does not read, names the tensor it looked for.
func TestGLM4MoeBadInput(t *testing.T) {
	mlxtest.NoLeaks(t)
	for _, c := range []struct {
		key  string
		v    any
		want string
	}{
		{"topk_method", "greedy", `topk_method "greedy"`},
		{"scoring_func", "softmax", `scoring_func "softmax"`},
		{"partial_rotary_factor", 0.0625, "partial_rotary_factor 0.0625 gives 1 rotary dims"},
		{"rope_parameters", map[string]any{"rope_type": "default", "partial_rotary_factor": 1.5}, "rope_parameters.partial_rotary_factor 1.5"},
		{"rope_scaling", map[string]any{"rope_type": "dynamic", "factor": 2.0}, `rope_scaling.rope_type "dynamic"`},
		{"n_group", 3, "n_group 3, topk_group 1"},
		{"topk_group", 5, "n_group 1, topk_group 5"},
		{"num_experts_per_tok", 5, "num_experts_per_tok 5"},
		{"first_k_dense_replace", -1, "first_k_dense_replace -1"},
		{"mlp_bias", true, "does not understand: mlp_bias"},
		{"hidden_act", "gelu", `hidden_act "gelu"`},
	} {
		if err := openErr(t, withConfig(glm4Moe(), c.key, c.v)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want an error naming %s", c.key, c.v, err, c.want)
		}
	}
	for _, c := range []struct{ drop, rename, to, want string }{
		{drop: "model.layers.1.mlp.gate.e_score_correction_bias", want: "missing tensor model.layers.1.mlp.gate.e_score_correction_bias"},
		{drop: "model.layers.0.self_attn.q_proj.bias", want: "missing tensor model.layers.0.self_attn.q_proj.bias"},
		{rename: ".gate_proj.weight", to: ".w1.weight", want: "missing tensor model.layers.1.mlp.experts.0.gate_proj.weight (one per expert) or model.layers.1.mlp.switch_mlp.gate_proj.weight"},
	} {
		g := glm4Moe()
		var ts []llmtest.Tensor
		for _, ten := range g.Tensors {
			if ten.Name == c.drop {
				continue
			}
			if c.rename != "" && strings.Contains(ten.Name, ".experts.") {
				ten.Name = strings.Replace(ten.Name, c.rename, c.to, 1)
			}
			ts = append(ts, ten)
		}
		g.Tensors = ts
		if err := openErr(t, g); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v\nwant an error naming %s", c, err, c.want)
		}
	}
}
