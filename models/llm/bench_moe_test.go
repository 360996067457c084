package llm_test

import (
	"testing"
	"time"

	"hark/mlx/mlxtest"
	"hark/models/llm"
	"hark/models/llm/llmtest"
)

// BenchmarkQwen3MoEQ4 is a Qwen3-30B-A3B-shaped mixture of experts (hidden
// 2048, 32 query / 4 KV heads of 128, 128 experts of 768 with top-8) in
// MLX 4-bit, group 64, with 2 of its 48 layers and a 32768-token
// vocabulary so it fits here. Decode reads only the chosen experts, so the
// weight bytes a token streams ("active MB") are far below the model's;
// GB/s is reported against those. RSS is the process's resident memory
// once loaded (Linux); rss measures load and decode peaks in a child
// process, and, since the experts stay mapped from the file, the file
// pages the first token read (MB-token1Read, against activeMB).
func BenchmarkQwen3MoEQ4(b *testing.B) {
	const experts, topK = 128, 8
	shape := llmtest.Shape{Hidden: 2048, Layers: 2, Heads: 32, KVHeads: 4, HeadDim: 128, Intermediate: 768, Vocab: 32768}
	start := time.Now()
	// HARK_BENCH_MOE_DIR keeps the generated model between runs.
	dir := benchModel(b, "HARK_BENCH_MOE_DIR", llmtest.MoE(shape, "qwen3_moe", experts, topK, true), llmtest.Quant{Bits: 4, GroupSize: 64})
	mlxtest.EachBackend(b, func(b *testing.B) {
		m, _, err := llm.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		// 4-bit codes plus a float32 scale and bias per 64: 0.625 bytes a weight
		expertBytes := int64(shape.Layers) * experts * 3 * int64(shape.Hidden*shape.Intermediate) * 5 / 8
		active := m.Info().WeightBytes - expertBytes*(experts-topK)/experts
		b.Logf("generated and loaded in %v; %.0f MB of weights, %.0f MB read per token; RSS %.0f MB",
			time.Since(start).Round(time.Millisecond), float64(m.Info().WeightBytes)/1e6, float64(active)/1e6, float64(residentBytes())/1e6)
		b.Run("decode", func(b *testing.B) {
			benchDecode(b, m)
			reportActive(b, active)
			if rss := residentBytes(); rss > 0 {
				b.ReportMetric(float64(rss)/1e6, "RSS-MB")
			}
		})
		b.Run("prefill128", func(b *testing.B) { benchPrefill(b, m, 128) })
	})
	b.Run("rss", func(b *testing.B) { benchRSS(b, dir) })
}
