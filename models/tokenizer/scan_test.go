package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"hark/mlx/mlxtest"
)

func scanPieces(sp *scanSpec, s string) []string {
	var out []string
	sp.findAll(s, func(i, j int) { out = append(out, s[i:j]) })
	return out
}

var scanSamples = []string{
	"", "a", " ", "  ", "a  b", "\n\n\nx", " \r\n \r\n  y", "x \t \n", "I'M ok, it'S ſ'ſ don'T",
	"12345 678", " 1 22 333 4444", "!!\n\n", " ?? \n", "'", "''s", "'ll'LL'Re", "end.   ",
	"日本語のテキスト123", "٣٤٥٦ ٣", "Ωμέγα-beta", "\u00a0\u3000x\u2028y", "🐱🐱 cat", "a\u0301b",
}

// TestScannerMatchesRegex holds each hand-written scanner to the regex
// engine running the original pattern, on samples and on every golden text.
func TestScannerMatchesRegex(t *testing.T) {
	texts := append([]string(nil), scanSamples...)
	if base := mlxtest.AssetsDir(); base != "" {
		for _, name := range []string{"qwen3", "llama3", "gemma3"} {
			readJSONL(t, filepath.Join(base, "tokenizers", name, "golden.jsonl"), func(_ int, raw []byte) {
				var g goldenLine
				if err := json.Unmarshal(raw, &g); err != nil {
					t.Fatal(err)
				}
				texts = append(texts, g.Text)
			})
		}
		if b, err := os.ReadFile(filepath.Join(base, "tokenizer-vectors", "ggml-vocab-llama-bpe.gguf.inp")); err == nil {
			texts = append(texts, string(b))
		}
	}
	for pattern, sp := range knownScanners {
		re := mustRegex(pattern)
		for _, s := range texts {
			if got, want := scanPieces(sp, s), findAllStrings(re, s); !reflect.DeepEqual(got, want) {
				t.Errorf("pattern %.30q on %q:\n scanner %q\n   regex %q", pattern, s, got, want)
			}
		}
	}
}

func FuzzScanner(f *testing.F) {
	for _, s := range scanSamples {
		f.Add(s)
	}
	regexes := map[*scanSpec]*regex{}
	for p, sp := range knownScanners {
		regexes[sp] = mustRegex(p)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for sp, re := range regexes {
			if got, want := scanPieces(sp, s), findAllStrings(re, s); !reflect.DeepEqual(got, want) {
				t.Fatalf("%.30q on %q: scanner %q, regex %q", re.src, s, got, want)
			}
		}
	})
}
