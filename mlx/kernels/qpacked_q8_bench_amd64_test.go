//go:build cgo

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkPackedQ8 is the packed 4-bit matmul at batch sizes from
// concurrent decode to prefill chunks, each call alternating the int8
// kernel with the kernels it replaces (the exact-x VNNI kernel below
// qmmDequantMinM rows, dequantized tiles and Sgemm from there), on a 0.5B
// model's fused gate/up and down shapes, so both see the same machine
// load: old/q8 is the CPU time of the first over the second, the figure
// the speed-up PackedInt8MinRows trades exactness for; q8-GOP/cpu-s is
// the share of BenchmarkCeilingInt8Dot's GOP/cpu-s it reaches.
func BenchmarkPackedQ8(b *testing.B) {
	if haveAMX {
		b.Skip("AMX CPU: the AMX kernels serve these batches")
	}
	old := pq8Use
	defer func() { pq8Use = old }()
	for _, sh := range [][2]int{{896, 9728}, {4864, 896}} {
		k, n := sh[0], sh[1]
		if !PackedQ4Supported(k, 64) {
			b.Skip("no packed 4-bit kernel on this CPU")
		}
		r := rand.New(rand.NewPCG(3, 3))
		w, s, bi, err := Quantize(randSlice(r, n*k), n, k, 64, 4)
		if err != nil {
			b.Fatal(err)
		}
		p, err := PackQ4(w, s, bi, n, k, 64, make([]byte, PackedQ4Bytes(n, k, 64)))
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range []int{2, 3, 4, 8, 16, 32, 64, 96, 128, 192, 256, 512} {
			b.Run(fmt.Sprintf("%dx%d_m%d", k, n, m), func(b *testing.B) {
				x, out := randSlice(r, m*k), make([]float32, m*n)
				var cpu [2]float64
				for i := 0; i < b.N; i++ {
					for v := range 2 {
						q8 := v == 1
						pq8Use = func(int) bool { return q8 }
						cpu0 := processCPU()
						if err := PackedQ4Matmul(x, m, p, out); err != nil {
							b.Fatal(err)
						}
						cpu[v] += processCPU() - cpu0
					}
				}
				b.ReportMetric(cpu[0]*1e6/float64(b.N)/float64(m), "old-cpu-us/row")
				b.ReportMetric(cpu[1]*1e6/float64(b.N)/float64(m), "q8-cpu-us/row")
				b.ReportMetric(cpu[0]/cpu[1], "old/q8")
				// The int8 kernel's multiply-adds (two operations each)
				// per CPU-second, against BenchmarkCeilingInt8Dot's.
				b.ReportMetric(2*float64(m)*float64(k)*float64(n)*float64(b.N)/cpu[1]/1e9, "q8-GOP/cpu-s")
			})
		}
	}
}
