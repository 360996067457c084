package llm_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"hark/mlx"
	"hark/models/llm"
	"hark/models/llm/llmtest"
	"hark/models/nn"
)

// BenchmarkKVCache4K times decode steps of the 0.5B 4-bit model at 4,096
// positions of context, with the KV cache in float32, 8 bits and 4 bits
// (group 64). The context is random keys and values written straight into
// the caches (what attention costs does not depend on what the keys say),
// and each step is trimmed off again, so every step reads 4,096 positions.
// The variants alternate step by step in one run, as the machine is
// shared; each reports its tok/s and its caches' memory (kvMB).
func BenchmarkKVCache4K(b *testing.B) {
	const ctx = 4096
	dir := model05B(b, "HARK_BENCH_05B_DIR", llmtest.Quant{Bits: 4, GroupSize: 64})
	m, _, err := llm.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	s := shape05B
	kinds := []nn.KVQuant{{}, {Bits: 8, Group: 64}, {Bits: 4, Group: 64}}
	caches := make([][]nn.Cache, len(kinds))
	r := rand.New(rand.NewPCG(1, 1))
	for i, q := range kinds {
		caches[i] = nn.QuantizeCaches(m.NewCaches(), q)
		defer nn.FreeCaches(caches[i])
		for _, c := range caches[i] {
			func() {
				sc := mlx.NewScope()
				defer sc.Close()
				k, v := randNormal(r, 1, s.KVHeads, ctx, s.HeadDim), randNormal(r, 1, s.KVHeads, ctx, s.HeadDim)
				c.Update(k, v)
			}()
		}
	}
	names := []string{"f32", "q8", "q4"}
	spent := make([]time.Duration, len(kinds))
	var row []float32
	b.ResetTimer()
	for range b.N {
		for i := range kinds {
			start := time.Now()
			ids := mlx.FromSlice([]int{1}, 1, 1)
			lg := m.Forward(ids, caches[i])
			row = lg.Float32sInto(row)
			mlx.Free(ids, lg)
			spent[i] += time.Since(start)
			for _, c := range caches[i] {
				c.Trim(1)
			}
		}
	}
	b.StopTimer()
	for i, name := range names {
		b.ReportMetric(float64(b.N)/spent[i].Seconds(), name+"_tok/s")
		b.ReportMetric(float64(nn.CacheBytes(caches[i]))/1e6, name+"_kvMB")
	}
}

func randNormal(r *rand.Rand, shape ...int) *mlx.Array {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return mlx.FromSlice(v, shape...)
}
