package llm_test

import (
	"math/rand/v2"
	"slices"
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
//
// The machine is shared, so the variants are interleaved: each op is
// kvRounds rounds, a round being one step of every variant, the order
// rotating from round to round. A round's speedup of a quantized cache is
// the f32 step's time over its step's time (above 1: faster than f32);
// the median and the minimum over all rounds are reported, of wall time
// (q8_x_med, q8_x_min) and of the process's CPU time (q8_xcpu_med, ...),
// which other load on the machine disturbs much less; with each
// variant's tok/s and its caches' memory (kvMB).
func BenchmarkKVCache4K(b *testing.B) {
	const ctx, kvRounds = 4096, 40
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
	var row []float32
	// step runs one decode step of variant i: its wall and CPU seconds.
	step := func(i int) (float64, float64) {
		start, cpu := time.Now(), processCPU()
		ids := mlx.FromSlice([]int{1}, 1, 1)
		lg := m.Forward(ids, caches[i])
		row = lg.Float32sInto(row)
		mlx.Free(ids, lg)
		wall, cpu := time.Since(start).Seconds(), processCPU()-cpu
		for _, c := range caches[i] {
			c.Trim(1)
		}
		return wall, cpu
	}
	for i := range kinds {
		step(i) // first-use costs (scratch, pools) out of the timings
	}
	spent := make([]float64, len(kinds))
	wallX := make([][]float64, len(kinds)) // per round, f32 time / variant time
	cpuX := make([][]float64, len(kinds))
	rounds := 0
	b.ResetTimer()
	for range b.N {
		for range kvRounds {
			var wall, cpu [3]float64
			for o := range kinds {
				i := (rounds + o) % len(kinds)
				wall[i], cpu[i] = step(i)
			}
			for i := range kinds {
				spent[i] += wall[i]
				wallX[i] = append(wallX[i], wall[0]/wall[i])
				if cpu[i] > 0 {
					cpuX[i] = append(cpuX[i], cpu[0]/cpu[i])
				}
			}
			rounds++
		}
	}
	b.StopTimer()
	for i, name := range names {
		b.ReportMetric(float64(rounds)/spent[i], name+"_tok/s")
		b.ReportMetric(float64(nn.CacheBytes(caches[i]))/1e6, name+"_kvMB")
		if i == 0 {
			continue
		}
		for _, x := range []struct {
			unit string
			v    []float64
		}{{"_x", wallX[i]}, {"_xcpu", cpuX[i]}} {
			if len(x.v) == 0 {
				continue
			}
			slices.Sort(x.v)
			b.ReportMetric(median(x.v), name+x.unit+"_med")
			b.ReportMetric(x.v[0], name+x.unit+"_min")
		}
	}
	b.ReportMetric(float64(rounds), "rounds")
}

// median of sorted values.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
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
