package tokenizer

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

// benchText is the golden strings joined and repeated to about 256 KB:
// mixed scripts, code and whitespace rather than one repeated sentence.
func benchText(b *testing.B) string {
	var parts []string
	readJSONL(b, filepath.Join(mlxtest.Assets(b, "tokenizers", "llama3"), "golden.jsonl"), func(_ int, raw []byte) {
		var g goldenLine
		if err := json.Unmarshal(raw, &g); err != nil {
			b.Fatal(err)
		}
		parts = append(parts, g.Text)
	})
	one := strings.Join(parts, "\n")
	return strings.Repeat(one, 256<<10/len(one)+1)
}

// BenchmarkEncode reports encode throughput (MB/s) per tokenizer. The word
// cache is warm after the first iteration, as it is in a long chat.
func BenchmarkEncode(b *testing.B) {
	text := benchText(b)
	for _, c := range []struct {
		name string
		rel  []string
	}{
		{"llama3", []string{"tokenizers", "llama3"}},
		{"qwen3", []string{"tokenizers", "qwen3"}},
		{"gemma3", []string{"tokenizers", "gemma3"}},
		{"stories260K", []string{"models", "stories260K", "hf"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			tk := loadAsset(b, c.rel...)
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tk.Encode(text, false)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	text := benchText(b)
	tk := loadAsset(b, "tokenizers", "llama3")
	ids := tk.Encode(text, false)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tk.Decode(ids, false)
	}
}

func BenchmarkLoad(b *testing.B) {
	dir := mlxtest.Assets(b, "tokenizers", "qwen3")
	for i := 0; i < b.N; i++ {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}
