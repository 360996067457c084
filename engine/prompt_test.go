package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/chattemplate"
	"hark/models/tokenizer"
)

// The prompts of the family goldens were tokenized by HF tokenizers with
// add_special_tokens=true: RawPrompt must give the same ids, adding a BOS
// exactly where the family's post-processor does (llama, mistral, gemma)
// and not where the tokenizer only names one (phi3's add_bos_token false).
// A chat prompt gets no special tokens beyond what its template writes.
func TestPromptsMatchHFTokenization(t *testing.T) {
	root := mlxtest.Assets(t, "families")
	dirs, err := filepath.Glob(filepath.Join(root, "*", "expected.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no family goldens under %s: %v", root, err)
	}
	plain, err := chattemplate.Parse("{% for m in messages %}{{ m['content'] }}{% endfor %}")
	if err != nil {
		t.Fatal(err)
	}
	for _, exp := range dirs {
		dir := filepath.Dir(exp)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var want struct {
				Text      string `json:"prompt_text"`
				IDs       []int  `json:"prompt_ids"`
				NoSpecial []int  `json:"hf_tokenize_no_special"`
			}
			data, err := os.ReadFile(exp)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			tk, err := tokenizer.Load(filepath.Join(dir, "hf"))
			if err != nil {
				t.Fatal(err)
			}
			e := &Engine{Tokenizer: tk, Template: plain}
			if got := e.RawPrompt(want.Text); !slices.Equal(got, want.IDs) {
				t.Errorf("raw prompt: %d tokens %v…, HF gives %d %v…", len(got), head(got), len(want.IDs), head(want.IDs))
			}
			got, err := e.ChatPrompt(context.Background(), []chattemplate.Message{{"role": "user", "content": want.Text}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want.NoSpecial) {
				t.Errorf("chat prompt: %d tokens %v…, HF gives %d %v…", len(got), head(got), len(want.NoSpecial), head(want.NoSpecial))
			}
		})
	}
}

func head(ids []int) []int { return ids[:min(len(ids), 4)] }
