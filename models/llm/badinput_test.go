package llm_test

import (
	"strings"
	"testing"
	"time"

	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
	"hark/models/profile"
)

// setText sets key in m's text config: text_config when it has one, the
// top level otherwise. It returns where the key sits, for the error.
func setText(m llmtest.Model, key string, v any) (llmtest.Model, string) {
	if _, nested := m.Config["text_config"].(map[string]any); nested {
		out := withConfig(m, "text_config", textWith(m, key, v))
		return out, "text_config." + key
	}
	return withConfig(m, key, v), key
}

// Every family refuses a config whose rope type or layer kinds it does not
// build, naming the key and the value, instead of running some other
// model: an unknown rope type, and a layer_types entry (a chunked or
// sliding layer where the graph would run full attention).
func TestEveryFamilyRefusesUnknownRopeAndLayerKinds(t *testing.T) {
	mlxtest.NoLeaks(t)
	for _, f := range families() {
		t.Run(f.name, func(t *testing.T) {
			// rope: the family's own rope key
			gen, key := setText(f.gen, "rope_scaling", map[string]any{"type": "dynamic", "factor": 2.0})
			want := key + `.type "dynamic"`
			if strings.HasPrefix(f.name, "gemma4") { // rope_parameters per layer kind only
				params := map[string]any{
					"full_attention":    map[string]any{"rope_type": "dynamic", "factor": 2.0, "rope_theta": 1e6},
					"sliding_attention": map[string]any{"rope_type": "default", "rope_theta": 1e4},
				}
				gen, key = setText(f.gen, "rope_parameters", params)
				want = key + `.full_attention.rope_type "dynamic"`
			}
			if err := openErr(t, gen); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("unknown rope type: %v, want an error naming %s", err, want)
			}
			// layer kinds: one entry per layer, the second one unknown
			n := layerCount(f.gen)
			types := make([]string, n)
			for i := range types {
				types[i] = "full_attention"
			}
			types[1] = "chunked_attention"
			gen, key = setText(f.gen, "layer_types", types)
			want = key + `[1] "chunked_attention"`
			if f.name == "deepseek_v2" || f.name == "deepseek_v2-lite" || f.name == "glm4_moe_lite" {
				want = "does not understand: layer_types" // a key its file does not read at all
			}
			if err := openErr(t, gen); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("unknown layer kind: %v, want an error naming %s", err, want)
			}
		})
	}
}

func layerCount(m llmtest.Model) int {
	cfg := m.Config
	if tc, ok := cfg["text_config"].(map[string]any); ok {
		cfg = tc
	}
	return cfg["num_hidden_layers"].(int)
}

// The full-attention graphs (Llama, Mistral, Qwen2/3, Phi-3 and the MoE
// ones built on them) refuse a sliding layer and Qwen's sliding switch,
// which they would silently run as full attention; all-full layer_types,
// as newer transformers write them, load.
func TestFullAttentionFamiliesRefuseSlidingLayers(t *testing.T) {
	mlxtest.NoLeaks(t)
	for _, gen := range []llmtest.Model{llmtest.Llama(llmtest.Tiny, "qwen3", true), llmtest.Llama(llmtest.Tiny, "qwen2", true), llmtest.Phi3(llmtest.Tiny, 1), llmtest.MoE(llmtest.Tiny, "mixtral", 4, 2, false)} {
		mt := gen.Config["model_type"]
		err := openErr(t, withConfig(gen, "layer_types", []string{"full_attention", "sliding_attention"}))
		if err == nil || !strings.Contains(err.Error(), `layer_types[1] "sliding_attention"`) {
			t.Errorf("%s, a sliding layer: %v", mt, err)
		}
		if err := openErr(t, withConfig(gen, "layer_types", []string{"full_attention", "full_attention"})); err != nil {
			t.Errorf("%s, all layers full: %v", mt, err)
		}
		if mt == "mixtral" {
			continue // its config has no such switch: an unknown key
		}
		if err := openErr(t, withConfig(gen, "use_sliding_window", true)); err == nil || !strings.Contains(err.Error(), "use_sliding_window true") {
			t.Errorf("%s, use_sliding_window: %v", mt, err)
		}
	}
}

// A checkpoint in a layout the graph does not read names the tensor it
// looked for.
func TestUnreadLayoutNamesTheTensor(t *testing.T) {
	mlxtest.NoLeaks(t)
	for _, c := range []struct {
		name string
		gen  llmtest.Model
		from string
		want string
	}{
		// a text tower under a prefix neither Gemma release uses
		{"gemma3", llmtest.Gemma3(llmtest.Tiny, 4, 2, false), "model.", "missing tensor model.embed_tokens.weight or language_model.model.embed_tokens.weight"},
		{"gemma4", llmtest.Gemma4(llmtest.Tiny, 4, gemma4Types, 0, false), "model.language_model.", "missing tensor model.language_model.embed_tokens.weight"},
		// Gemma 4's full layer with a v_proj it must not have is not read as k=v
		{"gemma4-kv", withVProj(llmtest.Gemma4(llmtest.Tiny, 4, gemma4Types, 0, false)), "", "unexpected tensors model.language_model.layers.1.self_attn.v_proj.weight"},
		{"llama", llmtest.Llama(llmtest.Tiny, "llama", false), "model.layers.", "missing tensor model.layers.0.input_layernorm.weight"},
	} {
		gen := c.gen
		if c.from != "" {
			gen.Tensors = append([]llmtest.Tensor(nil), c.gen.Tensors...)
			for i := range gen.Tensors {
				gen.Tensors[i].Name = strings.Replace(gen.Tensors[i].Name, c.from, "transformer.h.", 1)
			}
		}
		if err := openErr(t, gen); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant an error naming %s", c.name, err, c.want)
		}
	}
}

// withVProj adds a v_proj to Gemma 4's first full layer, which shares K as V.
func withVProj(m llmtest.Model) llmtest.Model {
	m.Tensors = append(append([]llmtest.Tensor(nil), m.Tensors...), llmtest.Tensor{
		Name: "model.language_model.layers.1.self_attn.v_proj.weight", Shape: []int{32, llmtest.Tiny.Hidden}, Kind: llmtest.Matrix})
	return m
}

// A config.json asking for billions of layers is refused at once, not
// counted through by the mixture-of-experts checks the library runs on
// every scan.
func TestHugeLayerCountRefused(t *testing.T) {
	const common = `"hidden_size":64,"num_hidden_layers":4000000000,"num_attention_heads":4,"vocab_size":10,`
	for mt, rest := range map[string]string{
		"qwen3_moe":   `"intermediate_size":64,"num_experts":8,"num_experts_per_tok":2,"moe_intermediate_size":8`,
		"deepseek_v2": `"intermediate_size":64,"kv_lora_rank":8,"qk_nope_head_dim":8,"qk_rope_head_dim":8,"v_head_dim":8,"n_routed_experts":8,"num_experts_per_tok":2,"moe_intermediate_size":8`,
		"llama":       `"intermediate_size":64`,
		"gemma4_text": `"intermediate_size":64,"num_key_value_heads":4,"head_dim":16`,
	} {
		cfg, err := profile.Parse([]byte(`{"model_type":"` + mt + `",` + common + rest + `}`))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan profile.Resolution, 1)
		go func() {
			profile.ActiveParams(cfg, 1<<40)
			done <- profile.Resolve(cfg)
		}()
		select {
		case r := <-done:
			if r.Supported || !strings.Contains(r.Reason, "num_hidden_layers 4e+09") {
				t.Errorf("%s: %+v", mt, r)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the checks were still counting layers after 20s", mt)
		}
	}
}
