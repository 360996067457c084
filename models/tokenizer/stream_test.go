package tokenizer

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"hark/mlx/mlxtest"
)

// TestStreamMatchesDecode feeds every golden id sequence one id at a time:
// the deltas must be valid UTF-8 and join to exactly what Decode gives.
func TestStreamMatchesDecode(t *testing.T) {
	for _, name := range []string{"qwen3", "llama3", "gemma3"} {
		t.Run(name, func(t *testing.T) {
			tk := loadAsset(t, "tokenizers", name)
			readJSONL(t, filepath.Join(mlxtest.Assets(t, "tokenizers", name), "golden.jsonl"), func(n int, raw []byte) {
				var g goldenLine
				if err := json.Unmarshal(raw, &g); err != nil {
					t.Fatal(err)
				}
				for _, skip := range []bool{false, true} {
					checkStream(t, tk, g.IDsSpecial, skip)
				}
			})
		})
	}
	t.Run("stories260K", func(t *testing.T) {
		tk := loadAsset(t, "models", "stories260K", "hf")
		for _, s := range []string{"Once upon a time, there was a 🐱 named Zoë.", "  two spaces", "日本語"} {
			checkStream(t, tk, tk.Encode(s, true), true)
		}
	})
}

func checkStream(t *testing.T, tk *Tokenizer, ids []int, skip bool) {
	t.Helper()
	want := tk.Decode(ids, skip)
	s := tk.NewStream()
	s.SkipSpecial = skip
	var b strings.Builder
	for _, id := range ids {
		d := s.Add(id)
		if !utf8.ValidString(d) {
			t.Errorf("%v: delta %q is not valid UTF-8", ids, d)
		}
		b.WriteString(d)
	}
	b.WriteString(s.Flush())
	if b.String() != want {
		t.Errorf("%v skip=%v: stream %q, Decode %q", ids, skip, b.String(), want)
	}
}

// TestStreamHoldsPartialCharacters checks that a character split across
// byte tokens is emitted only once complete.
func TestStreamHoldsPartialCharacters(t *testing.T) {
	tk := loadAsset(t, "models", "stories260K", "hf")
	const text = "a☃" // ☃ is not in the 512-token vocab: three byte tokens
	ids := tk.Encode(text, false)
	n := 0
	for _, id := range ids {
		if _, ok := byteFallbackByte(tk.Token(id)); ok {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("want ☃ as 3 byte tokens, got %v", ids)
	}
	s := tk.NewStream()
	var got []string
	for _, id := range ids {
		got = append(got, s.Add(id))
	}
	k := len(got)
	if strings.Join(got, "") != text || got[k-3] != "" || got[k-2] != "" || got[k-1] != "☃" {
		t.Errorf("deltas %q, want two empty deltas then ☃", got)
	}
}

func TestStreamAfterKeepsLeadingSpace(t *testing.T) {
	tk := loadAsset(t, "models", "stories260K", "hf")
	full := tk.Encode("Once upon a time there was a cat.", true)
	ctx := full[:4]
	s := tk.NewStreamAfter(ctx, true)
	var b strings.Builder
	for _, id := range full[len(ctx):] {
		b.WriteString(s.Add(id))
	}
	b.WriteString(s.Flush())
	all, head := tk.Decode(full, true), tk.Decode(ctx, true)
	if want := strings.TrimPrefix(all, head); b.String() != want || !strings.HasPrefix(want, " ") {
		t.Errorf("stream after context = %q, want %q (with its leading space)", b.String(), want)
	}
}
