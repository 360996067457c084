package cpu

import (
	"math/rand/v2"
	"testing"
)

// MXFP4 decode-shaped products (one row times a gpt-oss expert matrix,
// 2880×2880): the decode-a-row kernel against the fused one, interleaved
// in one run.
func BenchmarkMXFP4MatVec(b *testing.B) {
	const k, n = 2880, 2880
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]uint32, n*k/8)
	for i := range w {
		w[i] = r.Uint32()
	}
	s := make([]uint8, n*k/32)
	for i := range s {
		s[i] = uint8(120 + r.IntN(8))
	}
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	out := make([]float32, n)
	b.Run("row", func(b *testing.B) {
		for range b.N {
			mxMatmulRows(x, 1, k, n, w, s, out)
		}
		b.ReportMetric(float64(b.N)*float64(len(w)*4+len(s))/b.Elapsed().Seconds()/1e9, "GB/s")
	})
	b.Run("fused", func(b *testing.B) {
		for range b.N {
			mxMatmul(x, 1, k, n, w, s, true, out)
		}
		b.ReportMetric(float64(b.N)*float64(len(w)*4+len(s))/b.Elapsed().Seconds()/1e9, "GB/s")
	})
}
