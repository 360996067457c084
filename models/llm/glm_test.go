package llm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
	"hark/models/profile"
)

func glm() llmtest.Model { return llmtest.GLM4MoeLite(llmtest.Tiny, 32, 4, 2) }

// GLM-4.x MoE Lite loads through DeepSeek's file: what its keys say is
// read (mlp_layer_types picks the dense layers, rope_interleave the
// rotary layout), its multi-token-prediction layer is skipped only
// because num_nextn_predict_layers says it is one, and the library counts
// its active parameters.
func TestGLMConfigIsRead(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(10, llmtest.Tiny.Vocab)
	base := run(writeAndOpen(t, glm(), llmtest.Quant{}), ids)
	same := run(writeAndOpen(t, withConfig(glm(), "mlp_layer_types", []string{"dense", "sparse"}), llmtest.Quant{}), ids)
	if d := maxDiff(base, same); d > tol {
		t.Errorf("mlp_layer_types [dense sparse] differs from the default by %g", d)
	}
	if err := openErr(t, withConfig(glm(), "mlp_layer_types", []string{"dense", "dense"})); err == nil || !strings.Contains(err.Error(), "missing tensor model.layers.1.mlp.gate_proj.weight") {
		t.Errorf("a dense layer 1 over MoE weights: %v", err)
	}
	halves := run(writeAndOpen(t, withConfig(glm(), "rope_interleave", false), llmtest.Quant{}), ids)
	if d := maxDiff(base, halves); d < 1e-4 {
		t.Errorf("rope_interleave false and true agree within %g", d)
	}
	if err := openErr(t, withConfig(glm(), "num_nextn_predict_layers", 0)); err == nil || !strings.Contains(err.Error(), "unexpected tensors model.layers.2.") {
		t.Errorf("without num_nextn_predict_layers the extra layer must be refused: %v", err)
	}

	js, _ := json.Marshal(glm().Config)
	cfg, err := profile.Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	if r := profile.Resolve(cfg); !r.Supported || r.Family != "glm4_moe_lite" {
		t.Errorf("library: %+v", r)
	}
	s := llmtest.Tiny
	skipped := int64(2) * 3 * int64(s.Hidden) * int64(s.Intermediate/3) // 2 of 4 experts in the one MoE layer
	if got, ok := profile.ActiveParams(cfg, 1_000_000); !ok || got != 1_000_000-skipped {
		t.Errorf("active params %d (%v), want %d", got, ok, 1_000_000-skipped)
	}
}

// A GLM config asking for what this graph does not build is refused
// naming the key, and a checkpoint without the router's bias names the
// tensor.
func TestGLMBadInput(t *testing.T) {
	mlxtest.NoLeaks(t)
	for _, c := range []struct {
		key  string
		v    any
		want string
	}{
		{"partial_rotary_factor", 0.5, "partial_rotary_factor 0.5"},
		{"rope_parameters", map[string]any{"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.5}, "rope_parameters.partial_rotary_factor 0.5"},
		{"rope_parameters", map[string]any{"rope_type": "dynamic", "factor": 2.0}, `rope_parameters.rope_type "dynamic"`},
		{"first_k_dense_replace", 2, "first_k_dense_replace 2"},
		{"moe_layer_freq", 2, "moe_layer_freq 2"},
		{"topk_method", "greedy", `topk_method "greedy"`},
		{"scoring_func", "softmax", `scoring_func "softmax"`},
		{"n_group", 2, "n_group 2 with topk_group 1"},
		{"mlp_layer_types", []string{"dense", "moe"}, `mlp_layer_types[1] "moe"`},
		{"head_dim", 8, "does not understand: head_dim"},
	} {
		if err := openErr(t, withConfig(glm(), c.key, c.v)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want an error naming %s", c.key, c.v, err, c.want)
		}
	}
	gen := glm()
	var kept []llmtest.Tensor
	for _, ten := range gen.Tensors {
		if !strings.HasSuffix(ten.Name, "e_score_correction_bias") {
			kept = append(kept, ten)
		}
	}
	gen.Tensors = kept
	if err := openErr(t, gen); err == nil || !strings.Contains(err.Error(), "model.layers.1.mlp.gate.e_score_correction_bias") {
		t.Errorf("no router bias: %v", err)
	}
	// DeepSeek-V2 itself does not take GLM's keys
	if err := openErr(t, withConfig(llmtest.DeepseekV2(llmtest.Tiny, 32, 4, 2), "rope_interleave", true)); err == nil || !strings.Contains(err.Error(), "does not understand: rope_interleave") {
		t.Errorf("deepseek_v2 with rope_interleave: %v", err)
	}
}

// A DeepSeek-layout checkpoint (V2 or GLM) in names this file does not
// read names the tensor it looked for: experts under Mixtral's w1/w2/w3
// and a kv_b_proj split by some other converter.
func TestMLAUnreadLayoutNamesTheTensor(t *testing.T) {
	mlxtest.NoLeaks(t)
	for name, gen := range map[string]llmtest.Model{"deepseek_v2": llmtest.DeepseekV2(llmtest.Tiny, 32, 4, 2), "glm4_moe_lite": glm()} {
		for _, c := range []struct{ from, to, want string }{
			{".gate_proj.weight", ".w1.weight", "missing tensor model.layers.1.mlp.experts.0.gate_proj.weight (one per expert) or model.layers.1.mlp.switch_mlp.gate_proj.weight"},
			{"self_attn.kv_b_proj.", "self_attn.kv_b.", "missing tensor model.layers.0.self_attn.kv_b_proj.weight"},
		} {
			g := gen
			g.Tensors = append([]llmtest.Tensor(nil), gen.Tensors...)
			for i := range g.Tensors {
				if strings.Contains(g.Tensors[i].Name, ".experts.") || c.from != ".gate_proj.weight" {
					g.Tensors[i].Name = strings.Replace(g.Tensors[i].Name, c.from, c.to, 1)
				}
			}
			if err := openErr(t, g); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, %s renamed: %v\nwant an error naming %s", name, c.from, err, c.want)
			}
		}
	}
}
