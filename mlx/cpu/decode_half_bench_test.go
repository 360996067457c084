package cpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"hark/mlx"
)

// BenchmarkDecodeHalf: a 0.5B model's decode attention (14 query heads on
// 2 kv heads of 64, 24 layers of distinct caches, ~100 MB of float32 keys
// and values at 4,096 positions) over float32 caches (decodeSplit) and
// over f16 ones (decodeSplitHalf), alternating in one run. Per layer: the
// best and the median sweep, as the machine's other load moves both.
func BenchmarkDecodeHalf(b *testing.B) {
	const h, hkv, d, layers = 14, 2, 64, 24
	for _, n := range []int{64, 2048, 4096} {
		b.Run(fmt.Sprintf("n%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 6))
			q := randF32(r, h*d)
			var kd, vd [layers][]float32
			var kh, vh [layers][]uint16
			for l := range layers {
				kd[l], vd[l] = randF32(r, hkv*n*d), randF32(r, hkv*n*d)
				kh[l], vh[l] = make([]uint16, len(kd[l])), make([]uint16, len(vd[l]))
				for i := range kd[l] {
					kh[l][i], vh[l][i] = mlx.F32ToF16(kd[l][i]), mlx.F32ToF16(vd[l][i])
				}
			}
			o := make([]float32, h*d)
			sh := decodeShape{1, h, hkv, d, n, n}
			parts := 0
			if attnDecodeLSEOK(d) {
				parts = decodeParts(hkv, n)
			}
			f32 := func(l int) { decodeSplit(q, kd[l], vd[l], sh, max(parts, 1), 0.125, o) }
			f16 := func(l int) { decodeSplitHalf(q, kh[l], vh[l], sh, parts, 0.125, o) }
			var ts [2][]time.Duration
			b.ResetTimer()
			for range b.N {
				for v, f := range []func(int){f32, f16} {
					start := time.Now()
					for l := range layers {
						f(l)
					}
					ts[v] = append(ts[v], time.Since(start))
				}
			}
			for v, name := range []string{"f32", "f16"} {
				slices.Sort(ts[v])
				b.ReportMetric(float64(ts[v][0].Microseconds())/layers, name+"_best_us/layer")
				b.ReportMetric(float64(ts[v][len(ts[v])/2].Microseconds())/layers, name+"_med_us/layer")
			}
		})
	}
}
