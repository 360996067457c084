package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
)

// BenchmarkChatCLI05BQ4 is what a user of `hark chat --json` gets on the
// Qwen2.5-0.5B shape in 4-bit (random weights, Qwen's tokenizer): the
// command run in-process by Main, as the binary runs it, from loading the
// model to the JSON result, for 64 generated tokens. decode-tok/s is the
// command's own generation_tokens_per_second, to set beside
// models/llm's Benchmark05BQ4/decode (the model alone, greedy); the gap
// between the two is what the engine adds per token (sampling over the
// 151,936-token vocabulary, detokenizing, stop strings). greedy is
// --temp 0; sampled the model's defaults (temperature 0.7, no top-k).
// ms-load is the command's own load_ns (warm page cache after the first
// round), the part of s-wall spent before the prompt is read.
func BenchmarkChatCLI05BQ4(b *testing.B) {
	dir := chatBenchModel(b)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"greedy", []string{"--temp", "0"}},
		{"sampled", []string{"--seed", "1"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			args := append([]string{"chat", "--model", dir, "--json", "--max-tokens", "64", "-p", "Tell me a long story about a lighthouse."}, c.args...)
			var tps, ttft, load, wall float64
			for range b.N {
				var out, errb bytes.Buffer
				start := time.Now()
				if code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errb}, args); code != ExitOK {
					b.Fatalf("hark chat: exit %d: %s", code, errb.String())
				}
				wall += time.Since(start).Seconds()
				var r struct {
					LoadNS int64 `json:"load_ns"`
					Stats  struct {
						Generated int     `json:"generated_tokens"`
						TTFT      int64   `json:"time_to_first_token_ns"`
						TPS       float64 `json:"generation_tokens_per_second"`
					} `json:"stats"`
				}
				if err := json.Unmarshal(out.Bytes(), &r); err != nil {
					b.Fatalf("hark chat --json: %v\n%s", err, out.String())
				}
				if r.Stats.Generated < 2 {
					b.Fatalf("hark chat generated %d tokens, too few to time decode", r.Stats.Generated)
				}
				tps += r.Stats.TPS
				ttft += float64(r.Stats.TTFT) / 1e6
				load += float64(r.LoadNS) / 1e6
			}
			n := float64(b.N)
			b.ReportMetric(tps/n, "decode-tok/s")
			b.ReportMetric(ttft/n, "ms-ttft")
			b.ReportMetric(load/n, "ms-load")
			b.ReportMetric(wall/n, "s-wall")
		})
	}
}

// chatBenchModel is the 0.5B q4 model directory with a tokenizer:
// HARK_BENCH_05B_DIR when set (the one models/llm's benchmarks keep),
// else generated in a temporary directory. The tokenizer is Qwen3's from
// ../shared/assets (Qwen2.5's vocabulary and merges), copied beside the
// weights when they have none.
func chatBenchModel(b *testing.B) string {
	tokDir := mlxtest.Assets(b, "tokenizers", "qwen3")
	dir := os.Getenv("HARK_BENCH_05B_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		shape := llmtest.Shape{Hidden: 896, Layers: 24, Heads: 14, KVHeads: 2, HeadDim: 64, Intermediate: 4864, Vocab: 151936}
		if err := llmtest.Llama(shape, "qwen2", true).Write(dir, 1, llmtest.Quant{Bits: 4, GroupSize: 64}); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(tokDir, f))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}
