package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"hark/library"
	"hark/library/librarytest"
	"hark/mlx/mlxtest"
)

// The library, as `hark models --json` shows it with every graph this
// binary links, lists every family golden as supported, with its
// parameter count (expected.json's n_params), its active parameters when
// it is a mixture of experts, and its context length.
func TestModelsListFamilyGoldens(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("HARK_HOME", t.TempDir())
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", "")
	root := mlxtest.Assets(t, "families")
	want := map[string]struct {
		family string
		params int64
		ctx    int
		moe    bool
	}{}
	// every variant of the goldens, and whether it is a mixture of experts
	for _, v := range []struct {
		dir, family string
		moe         bool
	}{{"llama-a", "llama", false}, {"mistral-a", "mistral", false}, {"qwen2-a", "qwen2", false}, {"qwen3-a", "qwen3", false},
		{"gemma3-a", "gemma3", false}, {"phi3-a", "phi3", false}, {"qwen3_moe", "qwen3_moe", true}, {"mixtral", "mixtral", true},
		{"deepseek_v2", "deepseek_v2", true}, {"gpt_oss", "gpt_oss", true}, {"qwen3_5", "qwen3_5", false},
		{"qwen3_5_moe", "qwen3_5_moe", true}, {"gemma4", "gemma4", false}} {
		var g struct {
			Params int64 `json:"n_params"`
		}
		var cfg struct {
			Ctx  int `json:"max_position_embeddings"`
			Text struct {
				Ctx int `json:"max_position_embeddings"`
			} `json:"text_config"`
		}
		readJSON(t, filepath.Join(root, v.dir, "expected.json"), &g)
		readJSON(t, filepath.Join(root, v.dir, "hf", "config.json"), &cfg)
		repo := "golden/" + v.dir
		librarytest.WriteSnapshot(t, cache, repo, modelsCommit,
			librarytest.ReadFiles(t, filepath.Join(root, v.dir, "hf"), "config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"))
		want[repo] = struct {
			family string
			params int64
			ctx    int
			moe    bool
		}{v.family, g.Params, max(cfg.Ctx, cfg.Text.Ctx), v.moe}
	}
	code, out, errs := runModelsCLI(t, "", "--json")
	var ms []library.Model
	if code != ExitOK || json.Unmarshal([]byte(out), &ms) != nil {
		t.Fatalf("%d %s %s", code, out, errs)
	}
	if len(ms) != len(want) {
		t.Fatalf("listed %d models, want %d: %s", len(ms), len(want), out)
	}
	for _, m := range ms {
		w := want[m.Repo]
		if !m.Supported || m.Family != w.family || m.Params != w.params || m.ContextLength != w.ctx || w.ctx == 0 || len(m.Problems) != 0 {
			t.Errorf("%s: supported %v (%s), family %q, %d params (want %q, %d), context %d (want %d), problems %v",
				m.Repo, m.Supported, m.Reason, m.Family, m.Params, w.family, w.params, m.ContextLength, w.ctx, m.Problems)
		}
		// Mixture-of-experts models also say how many parameters a token uses.
		if w.moe != (m.ActiveParams > 0) || w.moe && m.ActiveParams >= m.Params {
			t.Errorf("%s: active params %d of %d", m.Repo, m.ActiveParams, m.Params)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
