package llm_test

import (
	"testing"
	"time"

	"hark/mlx/mlxtest"
	"hark/models/llm"
	"hark/models/llm/llmtest"
)

// BenchmarkGptOSSMXFP4 is a gpt-oss-20b-shaped model as OpenAI releases
// it (hidden and expert width 2880, 64 query / 8 KV heads of 64, 32
// experts with top-4, experts in MXFP4 *_blocks/*_scales, the rest
// float32) with 1 of its 24 layers and an 8192-token vocabulary so it fits
// here. The experts stay packed (17 bytes per 32 weights); rss reports
// the peak resident memory of loading and decoding it in a child process.
func BenchmarkGptOSSMXFP4(b *testing.B) {
	const experts, topK = 32, 4
	shape := llmtest.Shape{Hidden: 2880, Layers: 1, Heads: 64, KVHeads: 8, HeadDim: 64, Intermediate: 2880, Vocab: 8192}
	start := time.Now()
	// HARK_BENCH_GPTOSS_DIR keeps the generated model between runs.
	dir := benchModel(b, "HARK_BENCH_GPTOSS_DIR", llmtest.GptOSS(shape, 128, experts, topK, false), llmtest.Quant{ReleasedMXFP4: true})
	mlxtest.EachBackend(b, func(b *testing.B) {
		m, _, err := llm.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		expertBytes := int64(shape.Layers) * experts * 3 * int64(shape.Hidden*shape.Intermediate) * 17 / 32
		active := m.Info().WeightBytes - expertBytes*(experts-topK)/experts
		b.Logf("generated and loaded in %v; %.0f MB of weights, %.0f MB read per token",
			time.Since(start).Round(time.Millisecond), float64(m.Info().WeightBytes)/1e6, float64(active)/1e6)
		b.Run("decode", func(b *testing.B) {
			benchDecode(b, m)
			reportActive(b, active)
		})
	})
	b.Run("rss", func(b *testing.B) { benchRSS(b, dir) })
}
