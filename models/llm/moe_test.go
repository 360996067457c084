package llm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/llm"
	"hark/models/llm/llmtest"
	"hark/models/profile"
)

func openErr(t *testing.T, gen llmtest.Model) error {
	t.Helper()
	dir := t.TempDir()
	if err := gen.Write(dir, 3, llmtest.Quant{}); err != nil {
		t.Fatal(err)
	}
	m, _, err := llm.Open(dir)
	if err == nil {
		m.Close()
	}
	return err
}

// A checkpoint whose experts are in a layout the family does not read
// (here mixtral's w1/w2/w3 under qwen3_moe's mlp.) names the tensors the
// loader looked for, in both layouts.
func TestMoEExpertLayoutErrors(t *testing.T) {
	mlxtest.NoLeaks(t)
	gen := llmtest.MoE(llmtest.Tiny, "qwen3_moe", 4, 2, false)
	for i := range gen.Tensors {
		n := gen.Tensors[i].Name
		n = strings.Replace(n, ".gate_proj.", ".w1.", 1)
		gen.Tensors[i].Name = n
	}
	err := openErr(t, gen)
	if err == nil {
		t.Fatal("loaded experts under names the family does not use")
	}
	for _, want := range []string{"model.layers.0.mlp.experts.0.gate_proj.weight", "model.layers.0.mlp.switch_mlp.gate_proj.weight", "unexpected tensors"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// One expert missing from the per-expert form is named too.
	gen = llmtest.MoE(llmtest.Tiny, "mixtral", 4, 2, false)
	var ts []llmtest.Tensor
	for _, x := range gen.Tensors {
		if x.Name != "model.layers.1.block_sparse_moe.experts.3.w2.weight" {
			ts = append(ts, x)
		}
	}
	gen.Tensors = ts
	if err := openErr(t, gen); err == nil || !strings.Contains(err.Error(), "missing tensor model.layers.1.block_sparse_moe.experts.3.w2.weight") {
		t.Errorf("a missing expert: %v", err)
	}
}

// Config keys the graph does not read, or values it cannot honour, are
// refused by name, both when loading and when the library asks whether
// the model is supported.
func TestMoEConfigErrors(t *testing.T) {
	mlxtest.NoLeaks(t)
	for _, c := range []struct {
		family, key string
		value       any
		want        string
	}{
		{"qwen3_moe", "shared_expert_intermediate_size", 64, "shared_expert_intermediate_size"},
		{"mixtral", "layer_types", []string{"full_attention", "sliding_attention"}, "layer_types"},
		{"qwen3_moe", "use_sliding_window", true, "use_sliding_window"},
		{"mixtral", "num_experts_per_tok", 9, "num_experts_per_tok 9"},
		{"qwen3_moe", "rope_scaling", map[string]any{"rope_type": "dynamic", "factor": 2.0}, "dynamic"},
		{"deepseek_v2", "topk_method", "noaux_tc", "noaux_tc"},
		{"deepseek_v2", "scoring_func", "sigmoid", "sigmoid"},
		{"deepseek_v2", "kv_lora_rank", 0, "kv_lora_rank"},
		{"deepseek_v2", "e_score_correction_bias", true, "e_score_correction_bias"},
	} {
		gen := withConfig(llmtest.MoE(llmtest.Tiny, c.family, 4, 2, false), c.key, c.value)
		if c.family == "deepseek_v2" {
			gen = withConfig(llmtest.DeepseekV2(llmtest.Tiny, 32, 4, 2), c.key, c.value)
		}
		err := openErr(t, gen)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %s=%v: %v", c.family, c.key, c.value, err)
		}
		js, err := json.Marshal(gen.Config)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := profile.Parse(js)
		if err != nil {
			t.Fatal(err)
		}
		if r := profile.Resolve(cfg); r.Supported || !strings.Contains(r.Reason, c.want) {
			t.Errorf("%s with %s=%v: resolved %+v", c.family, c.key, c.value, r)
		}
	}
}

// The active parameters of the MoE goldens: the checkpoint's parameters
// less (experts - top-k)/experts of its expert tensors, counted from the
// safetensors header.
func TestMoEActiveParams(t *testing.T) {
	root := mlxtest.Assets(t, "families")
	for _, v := range []struct {
		dir        string
		experts, k int
	}{{"qwen3_moe", 8, 2}, {"mixtral", 8, 2}, {"deepseek_v2", 8, 2}, {"qwen3_5_moe", 8, 2}} {
		dir := filepath.Join(root, v.dir, "hf")
		set, err := safetensors.OpenIndex(dir)
		if err != nil {
			t.Fatal(err)
		}
		var total, expert int64
		for _, n := range set.Names() {
			info, err := set.Tensor(n)
			if err != nil {
				t.Fatal(err)
			}
			size := int64(1)
			for _, d := range info.Shape {
				size *= int64(d)
			}
			total += size
			if strings.Contains(n, ".experts.") {
				expert += size
			}
		}
		set.Close()
		data, err := os.ReadFile(filepath.Join(dir, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := profile.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		want := total - expert*int64(v.experts-v.k)/int64(v.experts)
		if got, ok := profile.ActiveParams(cfg, total); !ok || got != want {
			t.Errorf("%s: active params %d (%v), want %d of %d", v.dir, got, ok, want, total)
		}
	}
	// A dense model has no separate active count.
	js, _ := json.Marshal(llmtest.Llama(llmtest.Tiny, "llama", false).Config)
	cfg, err := profile.Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := profile.ActiveParams(cfg, 1000); ok {
		t.Error("a dense llama reports active parameters")
	}
}

// GPT-OSS honours rope_scaling.truncate both ways: the same weights with
// truncate false (as released) and true (the golden's) differ.
func TestGptOSSTruncateHonoured(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(12, llmtest.Tiny.Vocab)
	a := writeAndOpen(t, llmtest.GptOSS(llmtest.Tiny, 4, 4, 2, true), llmtest.Quant{})
	b := writeAndOpen(t, llmtest.GptOSS(llmtest.Tiny, 4, 4, 2, false), llmtest.Quant{})
	if d := maxDiff(run(a, ids), run(b, ids)); d < 1e-5 {
		t.Errorf("truncate true and false agree within %g", d)
	}
}

// A GPT-OSS checkpoint with neither float nor MXFP4 experts names what
// it looked for; an unknown layer type is refused by name.
func TestGptOSSBadInput(t *testing.T) {
	mlxtest.NoLeaks(t)
	gen := llmtest.GptOSS(llmtest.Tiny, 4, 4, 2, true)
	for i := range gen.Tensors {
		gen.Tensors[i].Name = strings.Replace(gen.Tensors[i].Name, "experts.down_proj", "experts.w2", 1)
	}
	err := openErr(t, gen)
	if err == nil || !strings.Contains(err.Error(), "missing tensor model.layers.0.mlp.experts.down_proj (float) or model.layers.0.mlp.experts.down_proj_blocks") {
		t.Errorf("renamed experts: %v", err)
	}
	gen = withConfig(llmtest.GptOSS(llmtest.Tiny, 4, 4, 2, true), "layer_types", []string{"sliding_attention", "chunked_attention"})
	if err := openErr(t, gen); err == nil || !strings.Contains(err.Error(), `layer_types[1] "chunked_attention"`) {
		t.Errorf("unknown layer type: %v", err)
	}
}

// Released GPT-OSS says quant_method mxfp4: supported for gpt_oss, whose
// loader reads it, and still refused for a family that does not.
func TestMXFP4QuantMethodResolves(t *testing.T) {
	for fam, want := range map[string]bool{"gpt_oss": true, "qwen3_moe": false} {
		gen := llmtest.GptOSS(llmtest.Tiny, 4, 4, 2, false)
		if fam == "qwen3_moe" {
			gen = llmtest.MoE(llmtest.Tiny, fam, 4, 2, false)
		}
		gen = withConfig(gen, "quantization_config", map[string]any{"quant_method": "mxfp4", "modules_to_not_convert": []string{"model.layers.*.self_attn"}})
		js, err := json.Marshal(gen.Config)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := profile.Parse(js)
		if err != nil {
			t.Fatal(err)
		}
		if r := profile.Resolve(cfg); r.Supported != want || (!want && !strings.Contains(r.Reason, "mxfp4")) {
			t.Errorf("%s with mxfp4: %+v", fam, r)
		}
	}
}

// DeepSeek's latent cache: kv_lora_rank + rope floats per token and
// layer, against the 2*heads*(qk+v)/2 a cache of full heads would hold.
func TestDeepseekLatentCacheBytes(t *testing.T) {
	mlxtest.NoLeaks(t)
	m := openDir(t, filepath.Join(mlxtest.Assets(t, "families"), "deepseek_v2", "hf"))
	const layers, heads, kvLora, rope, nope, v = 2, 4, 32, 8, 16, 16
	full := int64(layers * heads * (nope + rope + v) * 4)
	if got := m.Info().CacheBytesPerToken; got != layers*(kvLora+rope)*4 || got*4 != full {
		t.Errorf("cache bytes per token %d, want %d (a full-head cache would hold %d)", got, layers*(kvLora+rope)*4, full)
	}
	t.Logf("latent cache %d bytes/token vs %d for full heads", m.Info().CacheBytesPerToken, full)
	if q := writeAndOpen(t, llmtest.Llama(llmtest.Tiny, "qwen3", true), llmtest.Quant{}); q.Info().CacheBytesPerToken != int64(llmtest.Tiny.Layers*2*llmtest.Tiny.KVHeads*llmtest.Tiny.HeadDim*4) {
		t.Errorf("GQA cache bytes per token %d", q.Info().CacheBytesPerToken)
	}
}
