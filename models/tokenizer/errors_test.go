package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tinyModel = `"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}`

func TestUnsupportedComponentsNameTheType(t *testing.T) {
	for _, c := range []struct{ section, kind string }{
		{"pre_tokenizer", "Whatever"},
		{"normalizer", "Precompiled"},
		{"decoder", "CTC"},
		{"post_processor", "Mystery"},
	} {
		js := `{"` + c.section + `": {"type": "` + c.kind + `"}, ` + tinyModel + `}`
		_, err := FromJSON([]byte(js), nil)
		if err == nil {
			t.Errorf("%s %s: no error", c.section, c.kind)
			continue
		}
		want := `tokenizer.json: unsupported ` + c.section + ` type "` + c.kind + `" (supported: `
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error %q, want prefix %q", err, want)
		}
	}
	_, err := FromJSON([]byte(`{"model": {"type": "Unigram", "vocab": []}}`), nil)
	if err == nil || !strings.Contains(err.Error(), `unsupported model type "Unigram"`) {
		t.Errorf("Unigram: %v", err)
	}
}

func TestUnsupportedRegexIsAnError(t *testing.T) {
	js := `{"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(?<=a)b"}, "behavior": "Isolated"}, ` + tinyModel + `}`
	_, err := FromJSON([]byte(js), nil)
	if err == nil || !strings.Contains(err.Error(), `(?<=a)b`) {
		t.Errorf("lookbehind: %v", err)
	}
}

func TestLoadErrorsNameThePath(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "tokenizer.json")) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(bad, []byte(`{"model": `), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("broken file: %v", err)
	}
	if err := os.WriteFile(bad, []byte(`{`+tinyModel+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "tokenizer_config.json")
	if err := os.WriteFile(cfg, []byte(`[`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), cfg) {
		t.Errorf("broken config: %v", err)
	}
}

func TestMergeFormatsAgree(t *testing.T) {
	vocab := `"vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}`
	for _, merges := range []string{`["a b", "ab c"]`, `[["a", "b"], ["ab", "c"]]`} {
		tk, err := FromJSON([]byte(`{"model": {"type": "BPE", `+vocab+`, "merges": `+merges+`}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := tk.Encode("abcab", false); len(got) != 1 || got[0] != 4 {
			// No pre-tokenizer: the whole input is one word, so "abcab"
			// merges to abc + ab.
			if len(got) != 2 || got[0] != 4 || got[1] != 3 {
				t.Errorf("merges %s: got %v, want [4 3]", merges, got)
			}
		}
	}
}

func TestConfigTokens(t *testing.T) {
	js := `{"added_tokens": [{"id": 5, "content": "<s>", "special": true}, {"id": 6, "content": "</s>", "special": true}],
		"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}}`
	cfg := `{"bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>", "add_bos_token": true, "add_eos_token": true}`
	tk, err := FromJSON([]byte(js), []byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if tk.BOS() != 5 || tk.EOS() != 6 {
		t.Errorf("BOS/EOS = %d/%d", tk.BOS(), tk.EOS())
	}
	got := tk.Encode("ab", true)
	if len(got) != 4 || got[0] != 5 || got[3] != 6 {
		t.Errorf("Encode with specials = %v, want [5 0 1 6]", got)
	}
	if tk.VocabSize() != 7 {
		t.Errorf("VocabSize = %d, want 7", tk.VocabSize())
	}
	if id, ok := tk.TokenID("</s>"); !ok || id != 6 || tk.Token(6) != "</s>" {
		t.Errorf("TokenID/Token round trip failed")
	}
	if s := tk.Decode([]int{5, 0, 1, 6}, true); s != "a b" { // no decoder: HF joins with spaces
		t.Errorf("Decode = %q", s)
	}
}

func TestBOSFromPostProcessorWithoutConfig(t *testing.T) {
	js := `{"added_tokens": [{"id": 5, "content": "<s>", "special": true}],
		"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
			"special_tokens": {"<s>": {"id": "<s>", "ids": [5], "tokens": ["<s>"]}}},
		"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`
	tk, err := FromJSON([]byte(js), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tk.BOS() != 5 || tk.EOS() != -1 {
		t.Errorf("BOS/EOS = %d/%d, want 5/-1", tk.BOS(), tk.EOS())
	}
}
