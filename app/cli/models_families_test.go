package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/library"
	"hark/library/librarytest"
	"hark/mlx/mlxtest"
)

// The library, as `hark models --json` shows it with every graph this
// binary links, lists the family goldens as supported, with their
// parameter count (expected.json's n_params) and context length.
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
	}{}
	for _, v := range []struct{ dir, family string }{{"gemma4", "gemma4"}, {"gemma3-a", "gemma3"}, {"qwen3_5", "qwen3_5"}, {"qwen3_5_moe", "qwen3_5_moe"}} {
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
		}{v.family, g.Params, max(cfg.Ctx, cfg.Text.Ctx)}
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
		if moe := strings.HasSuffix(w.family, "_moe"); moe != (m.ActiveParams > 0) || moe && m.ActiveParams >= m.Params {
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
