package tokenizer

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"hark/mlx/mlxtest"
)

// byteLevelJSON builds a small GPT-2-style tokenizer.json: every byte as a
// token plus a few merges, so the fuzz test runs without the shared assets.
func byteLevelJSON() []byte {
	vocab := map[string]int{}
	for b := 0; b < 256; b++ {
		vocab[string(byteToRune[b])] = b
	}
	merges := [][2]string{{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"i", "n"}, {"Ġ", "a"}}
	for _, m := range merges {
		vocab[m[0]+m[1]] = len(vocab)
	}
	doc := map[string]any{
		"added_tokens":  []map[string]any{{"id": len(vocab), "content": "<|end|>", "special": true}},
		"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
		"decoder":       map[string]any{"type": "ByteLevel"},
		"model":         map[string]any{"type": "BPE", "vocab": vocab, "merges": merges},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

func FuzzEncodeDecode(f *testing.F) {
	for _, s := range []string{"", "hello world", "  the\n\tin a", "I'm 123 ünïcödé 🐱", "<|end|>x", "\xff\xfe", "a\u0301"} {
		f.Add(s)
	}
	small, err := FromJSON(byteLevelJSON(), nil)
	if err != nil {
		f.Fatal(err)
	}
	// Real tokenizers join in when the shared assets are present.
	var llama3, stories *Tokenizer
	if mlxtest.AssetsDir() != "" {
		llama3 = loadAsset(f, "tokenizers", "llama3")
		stories = loadAsset(f, "models", "stories260K", "hf")
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tk := range []*Tokenizer{small, llama3} {
			if tk == nil {
				continue
			}
			ids := tk.Encode(s, true)
			got := tk.Decode(ids, false)
			if utf8.ValidString(s) && got != s {
				t.Fatalf("decode(encode(%q)) = %q", s, got)
			}
		}
		if stories != nil {
			ids := stories.Encode(s, true)
			if d := stories.Decode(ids, true); !utf8.ValidString(d) {
				t.Fatalf("stories decode of %q is not valid UTF-8: %q", s, d)
			}
		}
	})
}

func FuzzLoadJSON(f *testing.F) {
	f.Add(byteLevelJSON())
	f.Add([]byte(`{"normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
		"decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
		"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
		"added_tokens": [{"id": 1, "content": "<s>", "special": true, "lstrip": true, "rstrip": true, "single_word": true}],
		` + tinyModel + `}`))
	f.Add([]byte(`{"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "\\s+(?!\\S)|\\p{L}+"}, "behavior": "MergedWithNext", "invert": true}, {"type": "Metaspace", "prepend_scheme": "first"}, {"type": "Digits", "individual_digits": true}]}, ` + tinyModel + `}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := FromJSON(data, nil)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tokenizer.json: ") {
				t.Fatalf("error without context: %v", err)
			}
			return
		}
		for _, s := range []string{"ab a b", "<s> x\n", "12 ▁ ☃"} {
			tk.Decode(tk.Encode(s, true), false)
		}
		s := tk.NewStream()
		for id := -1; id < tk.VocabSize()+1 && id < 300; id++ {
			s.Add(id)
		}
		s.Flush()
	})
}

// TestLoadMutatedJSON is a deterministic cousin of FuzzLoadJSON that runs
// in every go test: damaged files must fail cleanly, never hang or panic.
func TestLoadMutatedJSON(t *testing.T) {
	seed := byteLevelJSON()
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 3000; n++ {
		b := append([]byte(nil), seed...)
		for k := 0; k < 1+rng.Intn(4) && len(b) > 1; k++ {
			i := rng.Intn(len(b))
			switch rng.Intn(3) {
			case 0:
				const alphabet = "{}[]\",:\\0a \x00\xff"
				b[i] = alphabet[rng.Intn(len(alphabet))]
			case 1:
				b = b[:i]
			case 2:
				b = append(b[:i], b[i+1:]...)
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if tk, err := FromJSON(b, nil); err == nil {
				tk.Decode(tk.Encode("ab a b", true), false)
			} else if !strings.HasPrefix(err.Error(), "tokenizer.json: ") {
				t.Errorf("error without context: %v", err)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("no result after 10s on %q", b)
		}
	}
}

// FuzzTokenizerConfig feeds arbitrary tokenizer_config.json documents (the
// file a downloaded model ships next to tokenizer.json) to a fixed small
// tokenizer: a clean error or a working tokenizer, never a panic.
func FuzzTokenizerConfig(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"bos_token": "<|end|>", "eos_token": {"content": "<|end|>"}, "add_bos_token": true, "clean_up_tokenization_spaces": true}`,
		`{"added_tokens_decoder": {"261": {"content": "<|end|>", "special": true, "lstrip": true}}, "model_max_length": 1e30}`,
		`{"bos_token": null, "eos_token": 7, "add_bos_token": "yes", "chat_template": [{"name": "default", "template": "x"}]}`,
	} {
		f.Add([]byte(s))
	}
	model := byteLevelJSON()
	f.Fuzz(func(t *testing.T, cfg []byte) {
		tk, err := FromJSON(model, cfg)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tokenizer_config.json: ") && !strings.HasPrefix(err.Error(), "tokenizer.json: ") {
				t.Fatalf("error without context: %v", err)
			}
			return
		}
		tk.Decode(tk.Encode("the in <|end|> a", true), false)
	})
}
