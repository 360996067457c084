package cpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkDecodeSplit: a 0.5B model's decode attention (14 query heads
// on 2 kv heads of 64, 24 layers of distinct float32 caches) with one item
// per kv head for the threads, and with the keys also cut into ranges
// (decodeSplit), alternating in one run. Per layer: the best and the
// median sweep, since the split is about the threads sharing the work when
// one of them starts late or is slowed by other load.
func BenchmarkDecodeSplit(b *testing.B) {
	const h, hkv, d, layers = 14, 2, 64, 24
	g := h / hkv
	for _, n := range []int{2048, 4096} {
		b.Run(fmt.Sprintf("n%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 6))
			q := randF32(r, h*d)
			var kd, vd [layers][]float32
			for l := range layers {
				kd[l], vd[l] = randF32(r, hkv*n*d), randF32(r, hkv*n*d)
			}
			o := make([]float32, h*d)
			perHead := func(l int) {
				parallelFor(hkv, g*n*2*d, func(lo, hi int) {
					s := newF32(g * n)
					defer putF32(s)
					for gi := lo; gi < hi; gi++ {
						attnDecode(q[gi*g*d:], g, kd[l][gi*n*d:], vd[l][gi*n*d:], n, d, d, d, d, 0.125, s, o[gi*g*d:])
					}
				})
			}
			split := func(l int) {
				decodeSplit(q, kd[l], vd[l], decodeShape{1, h, hkv, d, n, n}, decodeParts(hkv, n), 0.125, o)
			}
			var ts [2][]time.Duration
			b.ResetTimer()
			for range b.N {
				for v, f := range []func(int){perHead, split} {
					start := time.Now()
					for l := range layers {
						f(l)
					}
					ts[v] = append(ts[v], time.Since(start))
				}
			}
			for v, name := range []string{"perhead", "split"} {
				slices.Sort(ts[v])
				b.ReportMetric(float64(ts[v][0].Microseconds())/layers, name+"_best_us/layer")
				b.ReportMetric(float64(ts[v][len(ts[v])/2].Microseconds())/layers, name+"_med_us/layer")
			}
		})
	}
}
