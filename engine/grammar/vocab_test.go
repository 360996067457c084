package grammar

import (
	"path/filepath"
	"testing"
	"unicode/utf8"

	"hark/mlx/mlxtest"
	"hark/models/tokenizer"
)

// The shortcut for strings (plain tokens by bitset, the rest walked) must
// allow what the full walk of every token allows: checked at every step of
// a reply on Qwen's 151,936-logit vocabulary.
func TestStringShortcutMatchesFullWalk(t *testing.T) {
	tok, err := tokenizer.Load(filepath.Join(mlxtest.Assets(t, "tokenizers", "qwen3"), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	v := NewVocab(tok, benchVocab)
	g, err := Compile([]byte(benchSchema), v)
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"title": "Café ☕ notes: \"quoted\" and a tab\t", "summary": "naïve 日本語 text, with punctuation; and more...", "sentiment": "positive", "score": 1, "speakers": []}`
	ids := tok.Encode(doc, false)
	s := g.Start()
	strings := 0
	for i, id := range ids {
		if _, ok := s.freeString(); ok {
			strings++
			fast, full := s.walk(-1), s.walk(-2)
			for w := range full.allowed {
				if extra := fast.allowed[w] &^ full.allowed[w]; extra != 0 {
					t.Fatalf("step %d: the shortcut allows tokens the grammar refuses (word %d: %x)", i, w, extra)
				}
				for missing := full.allowed[w] &^ fast.allowed[w]; missing != 0; missing &= missing - 1 {
					tid := w*64 + trailing(missing)
					// Only plain tokens over maxPlainChars may be left out of a bounded string.
					if n := utf8.RuneCount(v.text[tid]); n < maxPlainChars {
						t.Fatalf("step %d: the shortcut misses token %d %q", i, tid, v.text[tid])
					}
				}
			}
		}
		if err := s.Advance(id); err != nil {
			t.Fatalf("token %d %q: %v", i, tok.Token(id), err)
		}
	}
	if !s.Final() {
		t.Fatal("the document did not end")
	}
	if strings < 10 {
		t.Fatalf("only %d steps inside strings", strings)
	}
}

func trailing(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}
