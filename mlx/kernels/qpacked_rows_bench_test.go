//go:build cgo

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkPackedQRows is the packed 4-bit matmul at the batch sizes of
// concurrent decode (m rows of x, one per stream) on a 0.5B model's
// gate/up and down shapes and its lm_head, each call alternating the VNNI
// and the AMX kernel so both see the same machine load: cpu-us/row
// falling as m grows is the batch sharing each weight load, and vnni/amx
// is the CPU time of the first over the second.
func BenchmarkPackedQRows(b *testing.B) {
	amxOK := pq4AMXOK()
	old := pq4UseAMX
	defer func() { pq4UseAMX = old }()
	for _, sh := range [][2]int{{896, 9728}, {4864, 896}, {896, 151936}} {
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
		for _, m := range []int{1, 2, 3, 4, 8, 16} {
			b.Run(fmt.Sprintf("%dx%d_m%d", k, n, m), func(b *testing.B) {
				x, out := randSlice(r, m*k), make([]float32, m*n)
				var cpu [2]float64
				for i := 0; i < b.N; i++ {
					for v := range 2 {
						amx := v == 1
						if amx && !amxOK {
							continue
						}
						pq4UseAMX = func(int) bool { return amx }
						cpu0 := processCPU()
						if err := PackedQ4Matmul(x, m, p, out); err != nil {
							b.Fatal(err)
						}
						cpu[v] += processCPU() - cpu0
					}
				}
				b.ReportMetric(cpu[0]*1e6/float64(b.N)/float64(m), "vnni-cpu-us/row")
				if amxOK {
					b.ReportMetric(cpu[1]*1e6/float64(b.N)/float64(m), "amx-cpu-us/row")
					b.ReportMetric(cpu[0]/cpu[1], "vnni/amx")
				}
			})
		}
	}
}
