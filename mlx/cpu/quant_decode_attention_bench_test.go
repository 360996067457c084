package cpu

import (
	"math/rand/v2"
	"testing"
	"time"

	"hark/mlx"
)

// BenchmarkQuantizedDecodeAttention times one decode step's attention of a
// 0.5B-shaped layer (14 query heads over 2 kv heads of 64) over 4,096
// positions of 8- and 4-bit codes, fused and composed (two quantized
// matmuls and a softmax per kv head), alternating in one run; x_fused is
// composed time / fused time.
func BenchmarkQuantizedDecodeAttention(b *testing.B) {
	const n, hq, hkv, d, g = 4096, 14, 2, 64, 64
	for _, bits := range []int{8, 4} {
		b.Run(map[int]string{8: "q8", 4: "q4"}[bits], func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 4))
			k, v := quantSide(b, r, 1, hkv, n, d, g, bits), quantSide(b, r, 1, hkv, n, d, g, bits)
			defer mlx.Free(k.Packed, k.Scales, k.Biases, v.Packed, v.Scales, v.Biases)
			q := mlx.FromSlice(randF32(r, hq*d), 1, hq, 1, d)
			defer q.Free()
			p := mlx.QuantizedDecodeParams{N: n, Scale: 0.125, Group: g, Bits: bits}
			var fused, composed time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				mlx.QuantizedDecodeAttention(q, k, v, p).Free()
				fused += time.Since(start)
				start = time.Now()
				mlx.QuantizedDecodeAttentionComposed(q, k, v, p).Free()
				composed += time.Since(start)
			}
			b.ReportMetric(composed.Seconds()/fused.Seconds(), "x_fused")
		})
	}
}
