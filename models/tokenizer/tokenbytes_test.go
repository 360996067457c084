package tokenizer

import (
	"bytes"
	"path/filepath"
	"testing"

	"hark/mlx/mlxtest"
)

// Concatenating the tokens' bytes gives back the text, for byte-level
// (Qwen3, Llama 3) and SentencePiece byte-fallback (Gemma 3) vocabularies,
// including characters split across tokens.
func TestTokenBytesRebuildText(t *testing.T) {
	texts := []string{"Hello world, this is JSON: {\"a\": [1, 2.5]}", "naïve café 日本語 🙂 tabs\tand\nnewlines", "  leading spaces"}
	for _, name := range []string{"qwen3", "gemma3"} {
		tok, err := Load(filepath.Join(mlxtest.Assets(t, "tokenizers", name), "tokenizer.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			ids := tok.Encode(text, false)
			var got []byte
			for _, id := range ids {
				b, ok := tok.TokenBytes(id)
				if !ok {
					t.Fatalf("%s: token %d has no bytes", name, id)
				}
				got = append(got, b...)
			}
			want := text
			if !bytes.Equal(got, []byte(want)) {
				t.Errorf("%s: %q rebuilt as %q", name, text, got)
			}
		}
		if id := tok.EOS(); id >= 0 && tok.IsSpecial(id) {
			if _, ok := tok.TokenBytes(id); ok {
				t.Errorf("%s: the special EOS token has bytes", name)
			}
		}
	}
}
