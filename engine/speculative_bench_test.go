package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
)

// bench05B returns the Qwen2.5-0.5B-shaped 4-bit model of the llm
// benchmarks (random weights), with a plain tokenizer of one token per id
// so the engine can load it; HARK_BENCH_05B_DIR keeps it between runs.
func bench05B(b *testing.B) string {
	dir, shape := bench05BLayers(b, "HARK_BENCH_05B_DIR", 24)
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		vocab := make(map[string]int, shape.Vocab)
		for i := range shape.Vocab {
			vocab[fmt.Sprintf("<%d>", i)] = i
		}
		js, err := json.Marshal(map[string]any{"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{}}})
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), js, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// bench05BLayers returns a directory (the one env names, if set, where it
// is kept between runs) holding the 0.5B bench model's shape with the
// given number of layers, generated (seed 1, 4-bit, groups of 64) unless
// it is there already, and that shape.
func bench05BLayers(b *testing.B, env string, layers int) (string, llmtest.Shape) {
	shape := llmtest.Shape{Hidden: 896, Layers: layers, Heads: 14, KVHeads: 2, HeadDim: 64, Intermediate: 4864, Vocab: 151936}
	dir := os.Getenv(env)
	if dir == "" {
		dir = b.TempDir()
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := llmtest.Llama(shape, "qwen2", true).Write(dir, 1, llmtest.Quant{Bits: 4, GroupSize: 64}); err != nil {
			b.Fatal(err)
		}
	}
	return dir, shape
}

// BenchmarkPromptLookup times greedy replies with and without prompt-lookup
// drafting, alternating, on a repetitive prompt: a "transcript" the model
// wrote itself (its greedy continuation of a seed text, which a random
// model soon repeats), then asked to go on from the transcript's start, as
// a summary quoting it would. speedup is plain time / drafted time for the
// same tokens (temperature 0: identical text); accept is the share of
// drafts kept.
func BenchmarkPromptLookup(b *testing.B) {
	for _, m := range []struct {
		name string
		dir  func(*testing.B) string
	}{
		{"stories260K", func(b *testing.B) string { return filepath.Join(mlxtest.Assets(b, "models", "stories260K"), "hf") }},
		{"05BQ4", bench05B},
	} {
		b.Run(m.name, func(b *testing.B) {
			e, err := Load(m.dir(b), LoadOptions{SkipMemoryCheck: true})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			ctx := context.Background()
			seed := e.RawPrompt("Once upon a time")
			if len(seed) < 2 { // the 0.5B model's tokenizer encodes no text
				seed = []int{9707, 11, 1879, 0, 576, 1052}
			}
			tr, err := e.Generate(ctx, seed, Options{MaxTokens: 96}, nil)
			if err != nil {
				b.Fatal(err)
			}
			transcript := append(append([]int(nil), seed...), tr.Tokens...)
			prompt := append(append([]int(nil), transcript...), transcript[:8]...)
			var plain, drafted time.Duration
			var nDrafted, nAccepted, tokens int
			b.ResetTimer()
			for range b.N {
				for _, d := range []Drafter{nil, PromptLookup{}} {
					e.ResetCache()
					start := time.Now()
					res, err := e.Generate(ctx, prompt, Options{MaxTokens: 48, Draft: d}, nil)
					if err != nil {
						b.Fatal(err)
					}
					if d == nil {
						plain += time.Since(start)
						tokens += len(res.Tokens)
					} else {
						drafted += time.Since(start)
						nDrafted += res.Stats.Drafted
						nAccepted += res.Stats.Accepted
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(plain.Seconds()/drafted.Seconds(), "speedup")
			b.ReportMetric(float64(nAccepted)/float64(max(nDrafted, 1)), "accept")
			b.ReportMetric(float64(tokens)/plain.Seconds(), "plain_tok/s")
			b.ReportMetric(float64(tokens)/drafted.Seconds(), "lookup_tok/s")
		})
	}
}
