package tokenizer

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

// The Llama 2 tokenizer.json is not among the shared assets, but the npm
// package llama-tokenizer-js (a frontend dev dependency, MIT) carries its
// vocabulary and merges, extracted from Meta's tokenizer.json by the
// package's data-conversion.py:
//   - llama_vocab_base64: the vocabulary in id order, joined by "\n";
//   - llama_merges_binary: each merge as two little-endian uint16 vocab ids,
//     in merge-priority order.
//
// Around that data we put the pipeline Llama 2's tokenizer.json declares
// (legacy SentencePiece: prepend "▁", spaces to "▁", byte fallback). If any
// part of that were wrong, llama.cpp's HF-generated vectors would fail.
const llamaTokenizerJS = "../../frontend/node_modules/llama-tokenizer-js/llama-tokenizer.js"

const llama2Pipeline = `{
  "version": "1.0",
  "added_tokens": [
    {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 2, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
  ],
  "normalizer": {"type": "Sequence", "normalizers": [
    {"type": "Prepend", "prepend": "▁"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}
  ]},
  "pre_tokenizer": null,
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
             {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
  "decoder": {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    {"type": "ByteFallback"},
    {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0}
  ]},
  "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>", "continuing_subword_prefix": null,
    "end_of_word_suffix": null, "fuse_unk": true, "byte_fallback": true,
    "vocab": %s, "merges": %s}
}`

// llama2Tokenizer rebuilds Llama 2's tokenizer.json from llama-tokenizer-js,
// or skips when the frontend's dependencies are not installed.
func llama2Tokenizer(t *testing.T) *Tokenizer {
	t.Helper()
	src, err := os.ReadFile(llamaTokenizerJS)
	if os.IsNotExist(err) {
		t.Skipf("%s is missing: run `make setup` (npm ci in frontend/) to get the Llama 2 vocabulary", filepath.Clean(llamaTokenizerJS))
	}
	if err != nil {
		t.Fatal(err)
	}
	constant := func(name string) []byte {
		m := regexp.MustCompile(`const ` + name + ` = "([A-Za-z0-9+/=]+)"`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("%s: no %s constant; the package layout changed", llamaTokenizerJS, name)
		}
		b, err := base64.StdEncoding.DecodeString(string(m[1]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return b
	}
	vocab := strings.Split(string(constant("llama_vocab_base64")), "\n")
	if len(vocab) != 32000 {
		t.Fatalf("llama-tokenizer-js vocabulary has %d tokens, want Llama 2's 32000", len(vocab))
	}
	packed := constant("llama_merges_binary")
	if len(packed)%4 != 0 {
		t.Fatalf("merges: %d bytes is not a whole number of uint16 pairs", len(packed))
	}
	merges := make([]string, len(packed)/4)
	for i := range merges {
		a := binary.LittleEndian.Uint16(packed[4*i:])
		b := binary.LittleEndian.Uint16(packed[4*i+2:])
		merges[i] = vocab[a] + " " + vocab[b]
	}
	ids := make(map[string]int, len(vocab))
	for i, tok := range vocab {
		ids[tok] = i
	}
	vj, _ := json.Marshal(ids)
	mj, _ := json.Marshal(merges)
	tk, err := FromJSON([]byte(fmt.Sprintf(llama2Pipeline, vj, mj)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestLlama2DecodeRoundTrip checks that decoding gives back the text of
// every llama-spm vector: the Strip decoder must remove exactly the one
// space the normaliser prepended.
func TestLlama2DecodeRoundTrip(t *testing.T) {
	dir := filepath.Join(mlxtest.Assets(t, "tokenizer-vectors"), "ggml-vocab-llama-spm.gguf")
	tk := llama2Tokenizer(t)
	texts, _ := readVectors(t, dir)
	for i, s := range texts {
		ids := tk.Encode(s, true)
		if len(ids) == 0 || ids[0] != 1 {
			t.Errorf("case %d %q: encode with specials = %v, want a leading <s> (1)", i, s, ids)
		}
		if got := tk.Decode(ids, true); got != s {
			t.Errorf("case %d: decode(encode(%q)) = %q", i, s, got)
		}
	}
}
