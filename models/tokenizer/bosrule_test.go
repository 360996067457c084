package tokenizer

import (
	"slices"
	"testing"
)

// The BOS rule follows transformers: the Llama and Gemma tokenizer
// classes rebuild the post-processor from add_bos_token (default true)
// and add_eos_token (default false), whatever tokenizer.json says (a
// tokenizer.json that adds <s> beside add_bos_token false: no BOS); other
// classes keep tokenizer.json's post-processor, and the flags only fill
// in where it adds nothing.
func TestBOSRuleFollowsTransformers(t *testing.T) {
	const withBOS = `{"added_tokens": [{"id": 5, "content": "<s>", "special": true}, {"id": 6, "content": "</s>", "special": true}],
		"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
			"special_tokens": {"<s>": {"id": "<s>", "ids": [5], "tokens": ["<s>"]}}},
		"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`
	const plain = `{"added_tokens": [{"id": 5, "content": "<s>", "special": true}, {"id": 6, "content": "</s>", "special": true}],
		"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`
	for _, c := range []struct {
		name, tok, cfg string
		want           []int
	}{
		{"Llama class, add_bos_token false", withBOS, `{"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "add_bos_token": false}`, []int{0}},
		{"Llama class, flags absent: BOS by default", plain, `{"tokenizer_class": "LlamaTokenizerFast", "bos_token": "<s>", "eos_token": "</s>"}`, []int{5, 0}},
		{"Gemma class, add_eos_token true", withBOS, `{"tokenizer_class": "GemmaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "add_eos_token": true}`, []int{5, 0, 6}},
		{"generic class: tokenizer.json decides", withBOS, `{"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "add_bos_token": false}`, []int{5, 0}},
		{"generic class, nothing in tokenizer.json: the flag fills in", plain, `{"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "add_bos_token": true}`, []int{5, 0}},
		{"generic class, no flag", plain, `{"tokenizer_class": "GPT2Tokenizer", "bos_token": "<s>"}`, []int{0}},
	} {
		tk, err := FromJSON([]byte(c.tok), []byte(c.cfg))
		if err != nil {
			t.Fatal(err)
		}
		if got := tk.Encode("a", true); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := tk.Encode("a", false); !slices.Equal(got, []int{0}) {
			t.Errorf("%s, no specials: %v", c.name, got)
		}
	}
}
