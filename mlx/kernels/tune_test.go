//go:build cgo && harktune

package kernels

import (
	"fmt"
	"testing"
)

func BenchmarkTuneQMM(b *testing.B) {
	direct := func(x []float32, m, k, n int, w []uint32, s, bi []float32, gs, bits int, tr bool, out []float32) error {
		qmatmulTC(x, m, k, n, qmat{w, s, bi, gs, bits}, out, 0)
		return nil
	}
	deq := func(x []float32, m, k, n int, w []uint32, s, bi []float32, gs, bits int, tr bool, out []float32) error {
		qmatmulDequantT(x, m, k, n, qmat{w, s, bi, gs, bits}, out)
		return nil
	}
	for _, m := range []int{8, 16, 32, 64} {
		b.Run(fmt.Sprintf("direct/m%d", m), func(b *testing.B) { benchQMatmul(b, m, 4096, 4096, 4, 64, direct) })
		b.Run(fmt.Sprintf("deq/m%d", m), func(b *testing.B) { benchQMatmul(b, m, 4096, 4096, 4, 64, deq) })
	}
}

func BenchmarkTuneDequant(b *testing.B) {
	k, n := 4096, 4096
	w := make([]float32, n*k)
	for i := range w {
		w[i] = float32(i%97) * 0.01
	}
	p, s, bi, _ := Quantize(w, n, k, 64, 4)
	out := make([]float32, 512*k)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < n; r += 512 {
			_ = Dequantize(p[r*k/8:], s[r*k/64:], bi[r*k/64:], 512, k, 64, 4, out)
		}
	}
	b.ReportMetric(float64(n*k*4)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

func BenchmarkTuneSgemmSmallM(b *testing.B) {
	for _, m := range []int{8, 32} {
		x, y, z := make([]float32, m*4096), make([]float32, 512*4096), make([]float32, m*512)
		b.Run(fmt.Sprint(m), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Sgemm(false, true, m, 512, 4096, 1, x, 4096, y, 4096, 0, z, 512)
			}
			b.ReportMetric(2*float64(m*512*4096)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
