package chattemplate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"hark/mlx/mlxtest"
	"hark/models/tokenizer"
)

// GPT-OSS's harmony template renders as the model dir ships it: from
// tokenizer_config.json's chat_template (the first release) and from a
// chat_template.jinja beside it (newer transformers), with the config's
// special tokens as defaults. Through the gpt_oss golden's tokenizer
// (whose special tokens include harmony's markers) each marker is one
// special id, so the model sees the format's tokens, not their spelling.
func TestHarmonyFromTokenizerConfig(t *testing.T) {
	in := Input{Messages: []Message{{"role": "user", "content": "Hi"}}, AddGenerationPrompt: true}
	now := func() time.Time { return time.Date(2025, 8, 5, 9, 0, 0, 0, time.UTC) }
	ref, err := Parse(harmonyTemplate)
	if err != nil {
		t.Fatal(err)
	}
	ref.Now = now
	want, err := ref.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	// GPT-OSS's tokenizer_config fields beside the template
	cfg := map[string]any{"add_bos_token": false, "bos_token": "<|startoftext|>", "eos_token": "<|return|>",
		"pad_token": "<|endoftext|>", "tokenizer_class": "PreTrainedTokenizerFast"}
	for _, where := range []string{"tokenizer_config.json", "chat_template.jinja"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			c := map[string]any{}
			for k, v := range cfg {
				c[k] = v
			}
			if where == "tokenizer_config.json" {
				c["chat_template"] = harmonyTemplate
			} else if err := os.WriteFile(filepath.Join(dir, where), []byte(harmonyTemplate), 0o644); err != nil {
				t.Fatal(err)
			}
			data, _ := json.Marshal(c)
			if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			tpl, err := FromTokenizerConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tpl.Source != filepath.Join(dir, where) {
				t.Errorf("template read from %s, want %s", tpl.Source, where)
			}
			if tpl.Defaults["eos_token"] != "<|return|>" || tpl.Defaults["bos_token"] != "<|startoftext|>" {
				t.Errorf("defaults %v", tpl.Defaults)
			}
			tpl.Now = now
			got, err := tpl.Render(in)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("rendered from %s:\n%q\nwant %q", where, got, want)
			}
		})
	}

	tk, err := tokenizer.Load(filepath.Join(mlxtest.Assets(t, "families"), "gpt_oss", "hf"))
	if err != nil {
		t.Fatal(err)
	}
	ids := tk.Encode(want, false)
	var marks []int
	for _, s := range []string{"<|start|>", "<|message|>", "<|end|>"} {
		id, ok := tk.TokenID(s)
		if !ok {
			t.Fatalf("the gpt_oss tokenizer has no %s", s)
		}
		marks = append(marks, id)
	}
	start, msg, end := marks[0], marks[1], marks[2]
	// system, user, then the open assistant turn: three starts, two
	// messages ended, and the prompt ends "<|start|>assistant"
	count := func(id int) int {
		n := 0
		for _, x := range ids {
			if x == id {
				n++
			}
		}
		return n
	}
	if ids[0] != start || count(start) != 3 || count(msg) != 2 || count(end) != 2 {
		t.Errorf("harmony markers not single tokens: %v", ids)
	}
	if tail := tk.Encode("assistant", false); !slices.Equal(ids[len(ids)-len(tail)-1:], append([]int{start}, tail...)) {
		t.Errorf("prompt does not end with <|start|>assistant: %v", ids[len(ids)-8:])
	}
}
