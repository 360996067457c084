package llm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/llm"
	"hark/models/llm/llmtest"
	"hark/models/nn"
	"hark/models/profile"
)

// Gemma 4's KV sharing is real: the last num_kv_shared_layers layers read
// the keys and values of the last earlier layer of their kind, so weights
// they carry for their own keys and values change nothing, and their
// caches hold nothing. The same tensors with sharing off do change the
// model, so the comparison can fail.
func TestGemma4KVSharing(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(13, llmtest.Tiny.Vocab)
	withKV := llmtest.Gemma4(llmtest.Tiny, 4, gemma4Types, 2, true)
	// Other values for the shared layers' k/v tensors only: they are
	// written last, so every other tensor keeps its values.
	otherKV := withKV
	otherKV.Tensors = append([]llmtest.Tensor(nil), withKV.Tensors...)
	for i := range otherKV.Tensors {
		if n := otherKV.Tensors[i].Name; strings.Contains(n, "layers.2.self_attn.k_") || strings.Contains(n, "layers.2.self_attn.v_") || strings.Contains(n, "layers.3.self_attn.k_") {
			otherKV.Tensors[i].Kind = llmtest.Bias
		}
	}
	noKV := llmtest.Gemma4(llmtest.Tiny, 4, gemma4Types, 2, false) // transformers' layout
	a := writeAndOpen(t, withKV, llmtest.Quant{})
	ref := run(a, ids)
	for name, gen := range map[string]llmtest.Model{"other k/v weights": otherKV, "no k/v weights": noKV} {
		if d := maxDiff(run(writeAndOpen(t, gen, llmtest.Quant{}), ids), ref); d != 0 {
			t.Errorf("%s: shared layers changed the logits by %g", name, d)
		}
	}
	// Sharing off: the layers' own k/v weights are used, and matter.
	own := withConfig(withKV, "text_config", nil)
	own.Config["text_config"] = textWith(withKV, "num_kv_shared_layers", 0)
	ownOther := otherKV
	ownOther.Config = own.Config
	u, uo := writeAndOpen(t, own, llmtest.Quant{}), writeAndOpen(t, ownOther, llmtest.Quant{})
	if d := maxDiff(run(u, ids), ref); d < 1e-3 {
		t.Errorf("with sharing off the model changed by only %g", d)
	}
	if d := maxDiff(run(u, ids), run(uo, ids)); d < 1e-3 {
		t.Errorf("with sharing off, other k/v weights changed the logits by only %g", d)
	}
	// The cache: the shared layers hold nothing and read their sources'.
	cs := a.NewCaches()
	defer nn.FreeCaches(cs)
	for i, src := range map[int]int{2: 0, 3: 1} {
		sc, ok := cs[i].(*nn.SharedCache)
		if !ok || sc.Source() != cs[src] {
			t.Errorf("layer %d's cache is %T, want a SharedCache reading layer %d's", i, cs[i], src)
		}
	}
	for _, i := range []int{0, 1} {
		if _, ok := cs[i].(*nn.SharedCache); ok {
			t.Errorf("layer %d computes its keys and values but has a shared cache", i)
		}
	}
	// two of four layers store K and V: a sliding one (2 heads of 16) and
	// a full one (1 head of 32), float32
	if got, want := a.Info().CacheBytesPerToken, int64(2*(2*16+1*32)*4); got != want {
		t.Errorf("cache bytes per token %d, want %d", got, want)
	}
	if got := u.Info().CacheBytesPerToken; got != 2*a.Info().CacheBytesPerToken {
		t.Errorf("without sharing %d cache bytes per token, want twice the shared model's %d", got, a.Info().CacheBytesPerToken)
	}
}

// textWith returns a copy of m's text_config with key set to v.
func textWith(m llmtest.Model, key string, v any) map[string]any {
	out := map[string]any{}
	for k, x := range m.Config["text_config"].(map[string]any) {
		out[k] = x
	}
	out[key] = v
	return out
}

// Gemma 4 configs this graph does not build are refused at load, naming
// the key and its value.
func TestGemma4RefusesWhatItDoesNotBuild(t *testing.T) {
	mlxtest.NoLeaks(t)
	gen := llmtest.Gemma4(llmtest.Tiny, 4, gemma4Types, 0, false)
	rope := func(kind string, v map[string]any) map[string]any {
		r := map[string]any{}
		for k, x := range gen.Config["text_config"].(map[string]any)["rope_parameters"].(map[string]any) {
			r[k] = x
		}
		r[kind] = v
		return r
	}
	for _, c := range []struct {
		key  string
		v    any
		want string
	}{
		{"enable_moe_block", true, "text_config.enable_moe_block needs top_k_experts 0 between 1 and num_experts 0"},
		{"layer_types", []string{"sliding_attention", "chunked_attention", "sliding_attention", "full_attention"}, `text_config.layer_types[1] "chunked_attention"`},
		{"rope_parameters", rope("full_attention", map[string]any{"rope_type": "yarn", "factor": 4.0, "rope_theta": 1e6}), `text_config.rope_parameters.full_attention.rope_type "yarn"`},
		{"rope_parameters", rope("sliding_attention", map[string]any{"rope_type": "dynamic", "factor": 2.0, "rope_theta": 1e4}), `text_config.rope_parameters.sliding_attention.rope_type "dynamic"`},
		{"rope_parameters", rope("chunked_attention", map[string]any{"rope_type": "default", "rope_theta": 1e4}), "text_config.rope_parameters.chunked_attention"},
		{"num_kv_shared_layers", 4, "text_config.num_kv_shared_layers 4"},
		{"query_pre_attn_scalar", 256, "config.json text_config has keys this model's graph does not understand: query_pre_attn_scalar"},
		{"hidden_activation", "silu", `text_config.hidden_activation "silu"`},
	} {
		m := gen
		m.Config = map[string]any{}
		for k, x := range gen.Config {
			m.Config[k] = x
		}
		m.Config["text_config"] = textWith(gen, c.key, c.v)
		dir := t.TempDir()
		if err := m.Write(dir, 1, llmtest.Quant{}); err != nil {
			t.Fatal(err)
		}
		_, _, err := llm.Open(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s = %v: got %v, want an error naming %s", c.key, c.v, err, c.want)
		}
	}
}

// Per-layer embeddings are read: other values of the per-layer table, or
// of one layer's gate, change the logits; the model without them is
// another model.
func TestGemma4PerLayerEmbeddings(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(11, llmtest.Tiny.Vocab)
	gen := llmtest.WithPerLayer(llmtest.Gemma4(llmtest.Tiny, 4, gemma4Types, 2, false), llmtest.Tiny, 32)
	ref := run(writeAndOpen(t, gen, llmtest.Quant{}), ids)
	for _, name := range []string{"embed_tokens_per_layer.weight", "layers.3.per_layer_input_gate.weight", "per_layer_model_projection.weight"} {
		other := gen
		other.Tensors = append([]llmtest.Tensor(nil), gen.Tensors...)
		for i := range other.Tensors {
			if strings.HasSuffix(other.Tensors[i].Name, name) {
				// other values from the same draws, not proportional to
				// them (a norm follows the projection)
				other.Tensors[i].Kind = llmtest.Norm
			}
		}
		if d := maxDiff(run(writeAndOpen(t, other, llmtest.Quant{}), ids), ref); d < 1e-4 {
			t.Errorf("other values of %s changed the logits by only %g", name, d)
		}
	}
	// Tokens past vocab_size_per_layer_input (multimodal ids in the
	// releases) read row 0 of the table, as transformers masks them,
	// instead of reading past its end.
	small := gen
	small.Config = map[string]any{}
	for k, v := range gen.Config {
		small.Config[k] = v
	}
	small.Config["text_config"] = textWith(gen, "vocab_size_per_layer_input", llmtest.Tiny.Vocab)
	m := writeAndOpen(t, withPerLayerVocab(small, 100), llmtest.Quant{})
	high := []int{5, 120, 7, 127, 101, 3}
	for _, row := range run(m, high) {
		for _, x := range row {
			if x != x {
				t.Fatal("NaN logits for tokens past the per-layer vocabulary")
			}
		}
	}
}

// withPerLayerVocab shrinks the per-layer table to v rows.
func withPerLayerVocab(m llmtest.Model, v int) llmtest.Model {
	m.Config["text_config"].(map[string]any)["vocab_size_per_layer_input"] = v
	m.Tensors = append([]llmtest.Tensor(nil), m.Tensors...)
	for i := range m.Tensors {
		if strings.HasSuffix(m.Tensors[i].Name, "embed_tokens_per_layer.weight") {
			m.Tensors[i].Shape = []int{v, m.Tensors[i].Shape[1]}
		}
	}
	return m
}

// Gemma 4's experts read alike from mlx-lm's stacked switch_glu tensors
// and transformers' fused gate_up_proj/down_proj (rewritten here from the
// same values); the router's per-expert scale is read; and the library's
// active parameters leave out the experts a token skips.
func TestGemma4MoE(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(10, llmtest.Tiny.Vocab)
	const experts, topK = 4, 2
	gen := llmtest.WithMoE(llmtest.Gemma4(llmtest.Tiny, 4, gemma4Types, 0, false), llmtest.Tiny, experts, topK)
	dir := t.TempDir()
	if err := gen.Write(dir, 42, llmtest.Quant{}); err != nil {
		t.Fatal(err)
	}
	stacked, _, err := llm.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer stacked.Close()
	ref := run(stacked, ids)

	fused := t.TempDir()
	toFusedExperts(t, dir, fused)
	fm, _, err := llm.Open(fused)
	if err != nil {
		t.Fatal(err)
	}
	defer fm.Close()
	if d := maxDiff(run(fm, ids), ref); d > 1e-5 {
		t.Errorf("fused experts differ from stacked ones by %g", d)
	}

	other := gen
	other.Tensors = append([]llmtest.Tensor(nil), gen.Tensors...)
	for i := range other.Tensors {
		if strings.HasSuffix(other.Tensors[i].Name, "router.per_expert_scale") {
			other.Tensors[i].Kind = llmtest.Bias
		}
	}
	if d := maxDiff(run(writeAndOpen(t, other, llmtest.Quant{}), ids), ref); d < 1e-4 {
		t.Errorf("other per-expert scales changed the logits by only %g", d)
	}

	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := profile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	s := llmtest.Tiny
	skipped := int64(len(gemma4Types)) * (experts - topK) * 3 * int64(s.Hidden*s.Intermediate)
	if got, ok := profile.ActiveParams(cfg, 10_000_000); !ok || got != 10_000_000-skipped {
		t.Errorf("active params %d (%v), want %d", got, ok, 10_000_000-skipped)
	}
}

// toFusedExperts copies the float checkpoint in src to dst with each
// layer's switch_glu experts rewritten as transformers stores them:
// experts.gate_up_proj [E, 2I, H] (each expert's gate rows, then its up
// rows) and experts.down_proj [E, H, I].
func toFusedExperts(t *testing.T, src, dst string) {
	t.Helper()
	f, err := safetensors.Open(filepath.Join(src, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []safetensors.Tensor
	for _, n := range f.Names() {
		info, err := f.Tensor(n)
		if err != nil {
			t.Fatal(err)
		}
		v, err := f.Float32s(n)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(n, "switch_glu.up_proj.weight"):
			continue // joined with gate_proj
		case strings.HasSuffix(n, "switch_glu.gate_proj.weight"):
			up, err := f.Float32s(strings.Replace(n, "gate_proj", "up_proj", 1))
			if err != nil {
				t.Fatal(err)
			}
			e, rows := info.Shape[0], info.Shape[1]*info.Shape[2]
			var gu []float32
			for i := 0; i < e; i++ {
				gu = append(append(gu, v[i*rows:(i+1)*rows]...), up[i*rows:(i+1)*rows]...)
			}
			shape := []int{e, 2 * info.Shape[1], info.Shape[2]}
			out = append(out, f32Tensor(strings.Replace(n, "switch_glu.gate_proj.weight", "gate_up_proj", 1), shape, gu))
		case strings.HasSuffix(n, "switch_glu.down_proj.weight"):
			out = append(out, f32Tensor(strings.Replace(n, "switch_glu.down_proj.weight", "down_proj", 1), info.Shape, v))
		default:
			out = append(out, f32Tensor(n, info.Shape, v))
		}
	}
	writeRelayout(t, src, dst, out)
}
