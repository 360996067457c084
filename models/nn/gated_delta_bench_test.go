package nn

import (
	"fmt"
	"testing"

	"hark/mlx"
)

// Prefill of one linear-attention layer's delta rule (8 heads of 64×64,
// 256 positions): the step-by-step recurrence against the chunked form.
// The chunked form is what prefill uses; this shows what it buys.
func BenchmarkGatedDeltaPrefill(b *testing.B) {
	c := newDeltaCase(1, 1, 8, 256, 64, 64, -1)
	q, k, v, g, beta, s0 := c.arrays()
	defer mlx.Free(q, k, v, g, beta, s0)
	for _, chunk := range []int{0, 16, 64} {
		name := "step"
		if chunk > 0 {
			name = fmt.Sprintf("chunk%d", chunk)
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var o, s *mlx.Array
				if chunk == 0 {
					o, s = GatedDeltaStep(q, k, v, g, beta, s0)
				} else {
					o, s = GatedDeltaChunked(q, k, v, g, beta, s0, chunk)
				}
				mlx.Eval(o, s)
				mlx.Free(o, s)
			}
			b.ReportMetric(float64(c.l*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}
