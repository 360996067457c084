package transcribe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
)

// craftedModel copies the golden tiny model into a temp folder, letting
// edit change any float32 tensor (by its HF name), and opens it.
func craftedModel(t *testing.T, edit func(name string, shape []int, data []float32)) *Model {
	t.Helper()
	return craftedModelConfig(t, nil, nil, edit)
}

// craftedModelConfig is craftedModel with config.json edited (when config
// is not nil) and only the tensors keep accepts (all when it is nil).
func craftedModelConfig(t *testing.T, config func(map[string]any), keep func(name string) bool, edit func(name string, shape []int, data []float32)) *Model {
	t.Helper()
	src := filepath.Join(mlxtest.Assets(t, "whisper", "golden"), "model")
	dir := t.TempDir()
	for _, f := range []string{"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "config.json" && config != nil {
			var c map[string]any
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			config(c)
			if b, err = json.Marshal(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := safetensors.Open(filepath.Join(src, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []safetensors.Tensor
	for _, n := range st.Names() {
		if keep != nil && !keep(n) {
			continue
		}
		info, err := st.Tensor(n)
		if err != nil {
			t.Fatal(err)
		}
		data, err := st.Float32s(n)
		if err != nil {
			t.Fatal(err)
		}
		edit(n, info.Shape, data)
		out = append(out, safetensors.Tensor{Name: n, DType: safetensors.F32, Shape: info.Shape, Data: safetensors.Float32Bytes(data)})
	}
	if err := safetensors.Write(filepath.Join(dir, "model.safetensors"), out, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	m, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// speechlessModel behaves like a real model on audio without speech: the
// decoder's final LayerNorm outputs the same unit vector u at every
// position (weight 0, bias u), so the logits are E·u whatever the audio.
// The token table makes <|nospeech|> (logit 12) and <|endoftext|> (10)
// stand out over the rest (|E·u| < 0.2): no_speech_prob ≈ 0.69 and, once
// the timestamp rules allow it, the decoder ends the window.
func speechlessModel(t *testing.T) *Model {
	return speechlessModelConfig(t, nil, nil)
}

func speechlessModelConfig(t *testing.T, config func(map[string]any), keep func(name string) bool) *Model {
	const d, eot, noSpeech = 64, 50257, 50362
	return craftedModelConfig(t, config, keep, func(name string, shape []int, data []float32) {
		switch name {
		case "model.decoder.layer_norm.weight":
			clear(data)
		case "model.decoder.layer_norm.bias":
			clear(data)
			data[0] = 1
		case "model.decoder.embed_tokens.weight":
			data[eot*d] = 10
			data[noSpeech*d] = 12
		}
	})
}
