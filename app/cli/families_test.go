package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"hark/library"
	"hark/library/librarytest"
	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/tokenizer"
)

type familyGolden struct {
	ModelType string `json:"model_type"`
	Prompt    string `json:"prompt_text"`
	PromptIDs []int  `json:"prompt_ids"`
	Greedy    []int  `json:"greedy_ids"`
}

func readFamilyGolden(t *testing.T, dir string) familyGolden {
	t.Helper()
	var g familyGolden
	data, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// hark chat --raw --temp 0 reproduces llama.cpp's greedy continuation of
// each family golden from the same number of prompt tokens: the printed
// text is the golden ids' text, and --json reports the ids themselves.
func TestChatReproducesFamilyGoldens(t *testing.T) {
	mlxtest.NoLeaks(t)
	root := mlxtest.Assets(t, "families")
	for _, v := range []string{"qwen3_5", "qwen3_5_moe"} {
		t.Run(v, func(t *testing.T) {
			g := readFamilyGolden(t, filepath.Join(root, v))
			dir := filepath.Join(root, v, "hf")
			args := []string{"chat", "--model", dir, "--raw", "-p", g.Prompt, "--temp", "0", "--max-tokens", "32"}
			out, errOut, code := runChatCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			tok, err := tokenizer.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := tok.Decode(g.Greedy, true); out != want {
				t.Errorf("stdout %q\nwant   %q", out, want)
			}
			out, errOut, code = runChatCLI(t, "", append(args, "--json")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var res struct {
				Tokens []int `json:"tokens"`
				Stats  struct {
					PromptTokens int `json:"prompt_tokens"`
				} `json:"stats"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if !slices.Equal(res.Tokens, g.Greedy) || res.Stats.PromptTokens != len(g.PromptIDs) {
				t.Errorf("%d prompt tokens (want %d), ids\n got %v\nwant %v", res.Stats.PromptTokens, len(g.PromptIDs), res.Tokens, g.Greedy)
			}
		})
	}
}

// The library lists the hybrid families as supported, with their
// parameters (counted from the safetensors header), active parameters
// for the MoE variant, and context length.
func TestModelsListsHybridFamilies(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("HARK_HOME", t.TempDir())
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", "")
	root := mlxtest.Assets(t, "families")
	want := map[string]struct {
		family string
		moe    bool
		params int64
	}{}
	for _, v := range []string{"qwen3_5", "qwen3_5_moe"} {
		dir := filepath.Join(root, v, "hf")
		librarytest.WriteSnapshot(t, cache, "test/"+v, modelsCommit,
			librarytest.ReadFiles(t, dir, "config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"))
		set, err := safetensors.OpenIndex(dir)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, name := range set.Names() {
			info, _ := set.Tensor(name)
			n += info.NumElements()
		}
		set.Close()
		want["test/"+v] = struct {
			family string
			moe    bool
			params int64
		}{v, v == "qwen3_5_moe", n}
	}
	code, out, errs := runModelsCLI(t, "", "--json")
	var ms []library.Model
	if code != ExitOK || json.Unmarshal([]byte(out), &ms) != nil {
		t.Fatalf("models --json: %d %s %s", code, out, errs)
	}
	if len(ms) != len(want) {
		t.Fatalf("listed %d models, want %d: %s", len(ms), len(want), out)
	}
	for _, m := range ms {
		w, ok := want[m.Repo]
		if !ok {
			t.Fatalf("unexpected %s", m.Repo)
		}
		if !m.Supported || m.Family != w.family || m.Params != w.params || m.ContextLength != 262144 {
			t.Errorf("%s: supported %v (%s), family %q, params %d (want %d), context %d", m.Repo, m.Supported, m.Reason, m.Family, m.Params, w.params, m.ContextLength)
		}
		if w.moe != (m.ActiveParams > 0) || m.ActiveParams >= m.Params && w.moe {
			t.Errorf("%s: active params %d of %d", m.Repo, m.ActiveParams, m.Params)
		}
		t.Logf("%s: %s, %d params, %d active, context %d", m.Repo, m.Family, m.Params, m.ActiveParams, m.ContextLength)
	}
}
