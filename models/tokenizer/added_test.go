package tokenizer

import (
	"reflect"
	"strings"
	"testing"
)

// charTokenizer has one token per ASCII letter and space, so tests can see
// exactly which characters an added token absorbed.
func charTokenizer(t *testing.T, added string) *Tokenizer {
	t.Helper()
	var vocab []string
	for c := 'a'; c <= 'z'; c++ {
		vocab = append(vocab, `"`+string(c)+`": `+itoa(int(c-'a')))
	}
	vocab = append(vocab, `" ": 26`)
	js := `{"added_tokens": [` + added + `], "model": {"type": "BPE", "vocab": {` + strings.Join(vocab, ",") + `}, "merges": []}}`
	tk, err := FromJSON([]byte(js), nil)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestAddedTokenFlags(t *testing.T) {
	const space, mask = 26, 30
	cases := []struct {
		flags, in string
		want      []int
	}{
		{``, "a <m> b", []int{0, space, mask, space, 1}},
		{`"lstrip": true`, "a  <m> b", []int{0, mask, space, 1}},
		{`"rstrip": true`, "a <m>  b", []int{0, space, mask, 1}},
		{`"single_word": true`, "a<m> b", nil}, // inside a word: not an added token
		{`"single_word": true`, "a <m> b", []int{0, space, mask, space, 1}},
	}
	for _, c := range cases {
		flags := c.flags
		if flags != "" {
			flags = ", " + flags
		}
		tk := charTokenizer(t, `{"id": 30, "content": "<m>", "special": true`+flags+`}`)
		got := tk.Encode(c.in, false)
		want := c.want
		if want == nil {
			for _, id := range got {
				if id == mask {
					t.Errorf("%s %q: matched inside a word: %v", c.flags, c.in, got)
				}
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %q: got %v want %v", c.flags, c.in, got, want)
		}
	}
}

func TestAddedTokensLeftmostLongest(t *testing.T) {
	tk := charTokenizer(t, `{"id": 30, "content": "<a>", "special": true}, {"id": 31, "content": "<a><b>", "special": false}`)
	if got := tk.Encode("x<a><b><a>", false); !reflect.DeepEqual(got, []int{23, 31, 30}) {
		t.Errorf("got %v", got)
	}
	// Decode hides only special tokens when asked.
	if got := tk.Decode([]int{31, 30}, true); got != "<a><b>" {
		t.Errorf("skip special: %q", got)
	}
}

// TestMetaspace exercises the Llama-2-era layout: Metaspace pre-tokenizer
// and decoder instead of normalizers.
func TestMetaspace(t *testing.T) {
	js := `{"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "add_prefix_space": true},
		"decoder": {"type": "Metaspace", "replacement": "▁", "add_prefix_space": true},
		"model": {"type": "BPE", "vocab": {"▁": 0, "H": 1, "i": 2, "▁H": 3, "▁Hi": 4, "<0x21>": 5}, "merges": ["▁ H", "▁H i"], "byte_fallback": true}}`
	tk, err := FromJSON([]byte(js), nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := tk.Encode("Hi Hi", false)
	if !reflect.DeepEqual(ids, []int{4, 4}) {
		t.Fatalf("Encode = %v, want [4 4]", ids)
	}
	if got := tk.Decode(ids, false); got != "Hi Hi" {
		t.Errorf("Decode = %q", got)
	}
}

func TestEncodeOrdinary(t *testing.T) {
	tk := charTokenizer(t, `{"id": 30, "content": "ab", "special": true}`)
	if got := tk.Encode("abc", false); !reflect.DeepEqual(got, []int{30, 2}) {
		t.Errorf("Encode = %v", got)
	}
	if got := tk.EncodeOrdinary("abc"); !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Errorf("EncodeOrdinary = %v", got)
	}
}
