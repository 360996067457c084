package profile

import (
	"errors"
	"os"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

func TestMain(m *testing.M) {
	Register(Family{Name: "llama", Architectures: []string{"LlamaForCausalLM"}, ModelTypes: []string{"llama"}, Kind: KindChat})
	Register(Family{Name: "qwen3", ModelTypes: []string{"qwen3"}, Kind: KindChat, Check: func(c *Config) error {
		if _, ok := c.Raw["rope_scaling"].(map[string]any); ok {
			return errors.New("qwen3: rope_scaling is not supported")
		}
		return nil
	}})
	Register(Family{Name: "gemma3", ModelTypes: []string{"gemma3_text"}, Kind: KindChat})
	Register(Family{Name: "whisper", ModelTypes: []string{"whisper"}, Kind: KindSpeech})
	os.Exit(m.Run())
}

func mustParse(t *testing.T, s string) *Config {
	t.Helper()
	c, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRealConfigs(t *testing.T) {
	b, err := os.ReadFile(mlxtest.Assets(t, "models", "stories260K-4bit-g32", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, string(b))
	if c.ModelType != "llama" || c.ContextLength != 512 || c.DType != "float32" || c.Quant == nil || c.Quant.Bits != 4 || c.Quant.GroupSize != 32 || c.Quant.Mode != "affine" {
		t.Fatalf("parsed %+v quant %+v", c, c.Quant)
	}
	if r := Resolve(c); !r.Supported || r.Family != "llama" || r.Kind != KindChat {
		t.Fatalf("resolve %+v", r)
	}
	b, err = os.ReadFile(mlxtest.Assets(t, "whisper", "golden", "model", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	c = mustParse(t, string(b))
	if c.ContextLength != 448 {
		t.Errorf("whisper context %d, want max_target_positions 448", c.ContextLength)
	}
	if r := Resolve(c); !r.Supported || r.Kind != KindSpeech {
		t.Fatalf("resolve %+v", r)
	}
}

func TestUnsupportedNamesSupported(t *testing.T) {
	r := Resolve(mustParse(t, `{"model_type":"mamba","architectures":["MambaForCausalLM"]}`))
	want := `model_type "mamba" is not supported (supported: gemma3, llama, qwen3, whisper)`
	if r.Supported || r.Reason != want || r.Kind != KindChat {
		t.Fatalf("got %+v, want reason %q and kind chat", r, want)
	}
	r = Resolve(mustParse(t, `{"architectures":["WhisperForAudioClassification"],"model_type":"whisper_cls"}`))
	if r.Supported || r.Kind != KindSpeech {
		t.Fatalf("whisper-ish: %+v", r)
	}
	r = Resolve(mustParse(t, `{"model_type":"bert","architectures":["BertModel"]}`))
	if r.Supported || r.Kind != KindOther {
		t.Fatalf("bert: %+v", r)
	}
	if r := Resolve(nil); r.Supported || r.Kind != KindOther || r.Reason == "" {
		t.Fatalf("nil: %+v", r)
	}
}

func TestQuantization(t *testing.T) {
	cases := []struct {
		cfg, reason string
	}{
		{`{"model_type":"llama","quantization":{"group_size":64,"bits":4,"mode":"nvfp4"}}`, `quantization mode "nvfp4" is not supported (supported: affine, mxfp4)`},
		{`{"model_type":"llama","quantization":{"group_size":64,"bits":4,"mode":"mxfp4"}}`, `mxfp4 quantization has groups of 32 and 4 bits, not groups of 64`},
		{`{"model_type":"llama","quantization":{"group_size":64,"bits":7}}`, "7-bit"},
		{`{"model_type":"llama","quantization":{"group_size":48,"bits":4}}`, "group size 48"},
		{`{"model_type":"llama","quantization_config":{"quant_method":"gptq","bits":4}}`, `quantization method "gptq"`},
		{`{"model_type":"llama","quantization":{"group_size":64,"bits":4,"model.layers.0.mlp":{"bits":3,"group_size":48}}}`, "model.layers.0.mlp: quantization group size 48"},
		{`{"model_type":"llama","quantization":{"group_size":32,"bits":4,"mode":"mxfp4"}}`, ""},
		{`{"model_type":"llama","quantization":{"group_size":64,"bits":8,"model.layers.0.mlp.experts.gate_proj":{"bits":4,"group_size":32,"mode":"mxfp4"}}}`, ""},
		{`{"model_type":"llama","quantization":{"group_size":64,"bits":4,"model.embed_tokens":{"bits":8,"group_size":64},"lm_head":false}}`, ""},
	}
	for _, c := range cases {
		r := Resolve(mustParse(t, c.cfg))
		if c.reason == "" {
			if !r.Supported {
				t.Errorf("%s: unsupported: %s", c.cfg, r.Reason)
			}
			continue
		}
		if r.Supported || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("%s: got %+v, want reason containing %q", c.cfg, r, c.reason)
		}
	}
	q := mustParse(t, cases[len(cases)-1].cfg).Quant
	if q.Overrides["lm_head"] != (QuantOverride{Skip: true}) || q.Overrides["model.embed_tokens"].Bits != 8 || q.String() != "4-bit g64 (+2 overrides)" {
		t.Fatalf("overrides %+v %q", q.Overrides, q.String())
	}
}

func TestFamilyCheckAndTextConfig(t *testing.T) {
	r := Resolve(mustParse(t, `{"model_type":"qwen3","rope_scaling":{"type":"yarn"}}`))
	if r.Supported || r.Family != "qwen3" || !strings.Contains(r.Reason, "rope_scaling") {
		t.Fatalf("check: %+v", r)
	}
	c := mustParse(t, `{"architectures":["Gemma3ForConditionalGeneration"],"model_type":"gemma3","text_config":{"model_type":"gemma3_text","max_position_embeddings":131072,"torch_dtype":"bfloat16"}}`)
	if c.ContextLength != 131072 || c.DType != "bfloat16" {
		t.Fatalf("text_config: %+v", c)
	}
	if r := Resolve(c); !r.Supported || r.Family != "gemma3" {
		t.Fatalf("gemma3: %+v", r)
	}
}

func TestParseBadInput(t *testing.T) {
	for _, s := range []string{``, `[]`, `null`, `{`, `"x"`} {
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
	if _, err := Parse(make([]byte, MaxConfigBytes+1)); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("huge: %v", err)
	}
	c := mustParse(t, `{"model_type":5,"architectures":"x","max_position_embeddings":-3,"quantization":{"bits":"4"}}`)
	if c.ModelType != "" || c.Architectures != nil || c.ContextLength != 0 || c.Quant.Bits != 0 {
		t.Fatalf("odd types: %+v", c)
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	Register(Family{Name: "llama", Kind: KindChat})
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"model_type":"llama","quantization":{"bits":4,"group_size":64,"a":{"bits":8}}}`))
	f.Add([]byte(`{"text_config":{"max_position_embeddings":1e3}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			return
		}
		r := Resolve(c)
		if !r.Supported && r.Reason == "" {
			t.Fatal("unsupported without reason")
		}
		_ = c.Quant.String()
	})
}
