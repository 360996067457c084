package llm_test

import (
	"fmt"
	"testing"
	"time"

	"hark/mlx"
	"hark/models/llm"
	"hark/models/nn"
)

// contextLengths are the contexts of the long-context target:
// decode at 2,048 and 4,096 positions within 15% of decode at 64.
var contextLengths = []int{64, 2048, 4096}

// benchKVs are the KV caches the long-context rows compare: float32, 8-
// and 4-bit codes, and f16 (llama.cpp's default).
var benchKVs = []nn.KVQuant{{}, {Bits: 8}, {Bits: 4}, {Bits: nn.KVHalfBits}}

// benchContext decodes one token at each of contextLengths in turn, from
// caches of kv prefilled once and trimmed back after every token, and
// reports each context's tok/s and its share of the speed at the first.
// The decode@N rows measure each context minutes apart, and on a shared
// machine the speed moves more than the difference between them between
// rows; here the three are measured within milliseconds of each other, so
// the ratio the target is about survives the noise.
func benchContext(b *testing.B, m llm.Model, kv nn.KVQuant) {
	sets := make([][]nn.Cache, len(contextLengths))
	for i, ctx := range contextLengths {
		sets[i] = nn.QuantizeCaches(m.NewCaches(), kv)
		defer nn.FreeCaches(sets[i])
		prefillContext(b, m, ctx, sets[i])
	}
	spent := make([]time.Duration, len(contextLengths))
	var row []float32
	b.ResetTimer()
	for range b.N {
		for i, caches := range sets {
			start := time.Now()
			ids := mlx.FromSlice([]int{1}, 1, 1)
			lg := m.Forward(ids, caches)
			row = lg.Float32sInto(row)
			mlx.Free(ids, lg)
			spent[i] += time.Since(start)
			for _, c := range caches {
				if !c.Trim(1) {
					b.Fatalf("cache cannot trim a step back to %d of context", contextLengths[i])
				}
			}
		}
	}
	b.StopTimer()
	for i, ctx := range contextLengths {
		b.ReportMetric(float64(b.N)/spent[i].Seconds(), fmt.Sprintf("tok/s@%d", ctx))
		if i > 0 {
			b.ReportMetric(100*spent[0].Seconds()/spent[i].Seconds(), fmt.Sprintf("%%of@%d", ctx))
		}
	}
}
