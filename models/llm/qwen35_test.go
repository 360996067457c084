package llm_test

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/llm"
	"hark/models/llm/llmtest"
	"hark/models/profile"
)

// withText returns m with text_config[key] = v (nil deletes it).
func withText(m llmtest.Model, key string, v any) llmtest.Model {
	text := map[string]any{}
	for k, x := range m.Config["text_config"].(map[string]any) {
		text[k] = x
	}
	if v == nil {
		delete(text, key)
	} else {
		text[key] = v
	}
	return withConfig(m, "text_config", text)
}

// toMLXLayout rewrites a Qwen3.5 checkpoint in Hugging Face's layout the
// way mlx-lm's conversion does, from its description: weights under
// language_model.model., the norms that HF applies as (1 + w) stored with
// the one added, conv1d [C, 1, K] as [C, K, 1], fused experts split into
// switch_mlp.{gate,up,down}_proj, vision tower and MTP weights dropped.
// sanitize false only renames (as a converter that keeps the tensors as
// released would): the conv1d kernel's layout then says the norms are
// unshifted.
func toMLXLayout(t *testing.T, src, dst string, sanitize bool) {
	t.Helper()
	f, err := safetensors.Open(filepath.Join(src, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []safetensors.Tensor
	for _, name := range f.Names() {
		info, _ := f.Tensor(name)
		v, err := f.Float32s(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "model.visual.") || strings.HasPrefix(name, "mtp.") {
			continue
		}
		n := strings.Replace(name, "model.language_model.", "language_model.model.", 1)
		if name == "lm_head.weight" {
			n = "language_model.lm_head.weight"
		}
		shape := info.Shape
		switch {
		case !sanitize && !strings.Contains(n, "experts."):
		case strings.HasSuffix(n, "layernorm.weight") || strings.HasSuffix(n, "q_norm.weight") || strings.HasSuffix(n, "k_norm.weight") || n == "language_model.model.norm.weight":
			for i := range v {
				v[i]++
			}
		case strings.HasSuffix(n, "conv1d.weight"):
			shape = []int{shape[0], shape[2], 1}
		case strings.HasSuffix(n, "experts.gate_up_proj"):
			e, two, h := shape[0], shape[1], shape[2]
			var g, u []float32
			for x := 0; x < e; x++ {
				g = append(g, v[x*two*h:x*two*h+two/2*h]...)
				u = append(u, v[x*two*h+two/2*h:(x+1)*two*h]...)
			}
			p := strings.TrimSuffix(n, "experts.gate_up_proj") + "switch_mlp."
			out = append(out,
				f32Tensor(p+"gate_proj.weight", []int{e, two / 2, h}, g),
				f32Tensor(p+"up_proj.weight", []int{e, two / 2, h}, u))
			continue
		case strings.HasSuffix(n, "experts.down_proj"):
			n = strings.TrimSuffix(n, "experts.down_proj") + "switch_mlp.down_proj.weight"
		}
		out = append(out, f32Tensor(n, shape, v))
	}
	writeRelayout(t, src, dst, out)
}

// The release layout with a vision tower and MTP weights (skipped) and
// mlx-lm's conversion of the same weights compute the same logits, for
// the dense and the MoE variant: the (1 + w) norms, the conv1d axes and
// the expert split are each read the way their layout means them.
func TestQwen35LayoutsAgree(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(11, llmtest.Tiny.Vocab)
	for _, experts := range []int{0, 4} {
		gen := llmtest.Qwen35(llmtest.Tiny, experts, 2, false)
		gen.Tensors = append(gen.Tensors,
			llmtest.Tensor{Name: "model.visual.blocks.0.attn.qkv.weight", Shape: []int{24, 8}, Kind: llmtest.Matrix},
			llmtest.Tensor{Name: "mtp.fc.weight", Shape: []int{64, 128}, Kind: llmtest.Matrix},
			llmtest.Tensor{Name: "mtp.layers.0.input_layernorm.weight", Shape: []int{64}, Kind: llmtest.NormDelta})
		hf := t.TempDir()
		if err := gen.Write(hf, 9, llmtest.Quant{}); err != nil {
			t.Fatal(err)
		}
		a := openDir(t, hf)
		for _, sanitize := range []bool{true, false} {
			mlxDir := t.TempDir()
			toMLXLayout(t, hf, mlxDir, sanitize)
			if d := maxDiff(run(a, ids), run(openDir(t, mlxDir), ids)); d > 1e-5 {
				t.Errorf("experts %d, sanitized %v: mlx-lm's layout differs from HF's by %g", experts, sanitize, d)
			}
		}
	}
}

// Bad input is refused by name: a layer type, a config key or rope
// layout the graph does not know, and checkpoints in layouts it does not
// read; the library's support check says the same.
func TestQwen35BadInput(t *testing.T) {
	mlxtest.NoLeaks(t)
	dense, moe := llmtest.Qwen35(llmtest.Tiny, 0, 0, false), llmtest.Qwen35(llmtest.Tiny, 4, 2, false)
	for _, c := range []struct {
		name string
		gen  llmtest.Model
		want string
	}{
		{"unknown layer type", withText(dense, "layer_types", []string{"linear_attention", "mamba"}), `layer_types[1] "mamba"`},
		{"layer count", withText(dense, "layer_types", []string{"linear_attention"}), "layer_types has 1 entries for 2 layers"},
		{"unknown key", withText(moe, "use_sliding_window", true), "use_sliding_window"},
		{"moe key on dense", withText(dense, "num_experts", 4), "num_experts"},
		{"unknown top-level key", withConfig(dense, "audio_config", map[string]any{}), "audio_config"},
		{"rope type", withText(dense, "rope_parameters", map[string]any{"rope_type": "dynamic", "factor": 2.0}), "dynamic"},
		{"mrope section", withText(dense, "rope_parameters", map[string]any{"rope_type": "default", "rope_theta": 1e6,
			"partial_rotary_factor": 0.5, "mrope_section": []int{4, 4, 4}}), "mrope_section"},
		{"key heads", withText(dense, "linear_num_key_heads", 3), "linear_num_value_heads"},
	} {
		if err := openErr(t, c.gen); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
		js, err := json.Marshal(c.gen.Config)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := profile.Parse(js)
		if err != nil {
			t.Fatal(err)
		}
		if r := profile.Resolve(cfg); r.Supported || !strings.Contains(r.Reason, c.want) {
			t.Errorf("%s: resolved %+v", c.name, r)
		}
	}
	// per-expert tensors where the fused ones belong
	perExpert := moe
	perExpert.Tensors = nil
	for _, x := range moe.Tensors {
		switch {
		case strings.HasSuffix(x.Name, "experts.gate_up_proj"):
			p := strings.TrimSuffix(x.Name, "gate_up_proj")
			for e := 0; e < 4; e++ {
				for _, n := range []string{"gate_proj", "up_proj"} {
					perExpert.Tensors = append(perExpert.Tensors, llmtest.Tensor{Name: p + strconv.Itoa(e) + "." + n + ".weight", Shape: []int{32, 64}, Kind: llmtest.Matrix})
				}
			}
		default:
			perExpert.Tensors = append(perExpert.Tensors, x)
		}
	}
	err := openErr(t, perExpert)
	if err == nil || !strings.Contains(err.Error(), "missing tensor model.language_model.layers.0.mlp.experts.gate_up_proj ([4, 64, 64]") ||
		!strings.Contains(err.Error(), "unexpected tensors model.language_model.layers.0.mlp.experts.0.gate_proj.weight") {
		t.Errorf("per-expert layout: %v", err)
	}
	// a convolution kernel of the wrong shape
	badConv := dense
	badConv.Tensors = append([]llmtest.Tensor(nil), dense.Tensors...)
	for i, x := range badConv.Tensors {
		if strings.HasSuffix(x.Name, "conv1d.weight") {
			badConv.Tensors[i].Shape = []int{128, 2, 2}
		}
	}
	if err := openErr(t, badConv); err == nil || !strings.Contains(err.Error(), "model.language_model.layers.0.linear_attn.conv1d.weight has shape [128 2 2]") {
		t.Errorf("conv1d shape: %v", err)
	}
	if _, _, err := llm.Open(t.TempDir()); err == nil {
		t.Error("opened an empty folder")
	}
}

// Half-precision Qwen3.5 checkpoints (the convolution kernel and fused
// experts stay bf16/f16 in memory) compute what a float32 checkpoint of
// the same rounded values does.
func TestQwen35HalfPrecisionWeights(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(9, llmtest.Tiny.Vocab)
	for _, experts := range []int{0, 4} {
		for _, dt := range []safetensors.DType{safetensors.BF16, safetensors.F16} {
			gen := llmtest.Qwen35(llmtest.Tiny, experts, 2, false)
			half := writeAndOpen(t, gen, llmtest.Quant{Float: dt})
			twin := writeAndOpen(t, gen, llmtest.Quant{RoundTo: dt})
			if d := maxDiff(run(half, ids), run(twin, ids)); d > 1e-5 {
				t.Errorf("experts %d, %s: differs from its float32 twin by %g", experts, dt, d)
			}
		}
	}
}

// Info of the golden Qwen3.5: keys and values grow only in the one full
// attention layer (2 kv heads of 32); the context and EOS come from
// text_config.
func TestQwen35Info(t *testing.T) {
	mlxtest.NoLeaks(t)
	for _, v := range []string{"qwen3_5", "qwen3_5_moe"} {
		m := openDir(t, filepath.Join(mlxtest.Assets(t, "families"), v, "hf"))
		info := m.Info()
		if info.Family != v || info.Layers != 4 || info.CacheBytesPerToken != 1*2*2*32*4 || info.MaxContext != 262144 || len(info.EOS) != 1 || info.EOS[0] != 999 {
			t.Errorf("%s: %+v", v, info)
		}
	}
}
