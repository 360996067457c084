package kernels_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"hark/mlx/kernels"
	"hark/mlx/mlxtest"
)

// Ceilings for the 16-bit weight kernels (issue 19), measured in the same
// run as the kernel they bound, because on the shared test machine the
// bandwidth and the cores' share drift by tens of percent in minutes:
//   - decode (m=1) reads each weight once: its bound is a read-only
//     stream (mlxtest.ReadBandwidth), and W's bytes per second over it is
//     %read (target 80%);
//   - prefill (m=512) is compute-bound: its bound is Sgemm on the same
//     shape with W already float32, and the 16-bit kernel's GFLOP/s over
//     it is %sgemm (target 90%).

// BenchmarkCeilingHalf runs HMatmul on a 0.5B model's largest projection
// shapes next to its ceiling, alternating the two so both see the same
// machine.
func BenchmarkCeilingHalf(b *testing.B) {
	for _, f := range []kernels.Half{kernels.BF16, kernels.F16} {
		for _, sh := range [][2]int{{896, 4864}, {4864, 896}} {
			k, n := sh[0], sh[1]
			r := rand.New(rand.NewPCG(7, 7))
			w, wf := halfWeights(r, k*n, f)
			b.Run(fmt.Sprintf("%v/%dx%d/m=1", f, k, n), func(b *testing.B) {
				// 32 distinct copies of W (about 280 MB) so no pass finds
				// the previous one's weights in cache.
				ws := make([][]uint16, 32)
				for i := range ws {
					ws[i] = append([]uint16(nil), w...)
				}
				x, out := randF32(r, k), make([]float32, n)
				var busy time.Duration
				var ceil float64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if i%256 == 0 {
						b.StopTimer()
						ceil = max(ceil, mlxtest.ReadBandwidth())
						b.StartTimer()
					}
					t0 := time.Now()
					if err := kernels.HMatmul(x, 1, k, n, ws[i%len(ws)], f, true, out); err != nil {
						b.Fatal(err)
					}
					busy += time.Since(t0)
				}
				gbs := 2 * float64(k*n) * float64(b.N) / busy.Seconds() / 1e9
				b.ReportMetric(gbs, "GB/s")
				b.ReportMetric(100*gbs/ceil, "%read")
			})
			b.Run(fmt.Sprintf("%v/%dx%d/m=512", f, k, n), func(b *testing.B) {
				const m = 512
				x, out := randF32(r, m*k), make([]float32, m*n)
				var th, ts time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					if err := kernels.HMatmul(x, m, k, n, w, f, true, out); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					kernels.Sgemm(false, true, m, n, k, 1, x, k, wf, k, 0, out, n)
					th, ts = th+t1.Sub(t0), ts+time.Since(t1)
				}
				flop := 2 * float64(m*n*k) * float64(b.N)
				b.ReportMetric(flop/th.Seconds()/1e9, "GFLOP/s")
				b.ReportMetric(flop/ts.Seconds()/1e9, "GFLOP/s-sgemm")
				b.ReportMetric(100*ts.Seconds()/th.Seconds(), "%sgemm")
			})
		}
	}
}

// halfWeights returns n random weights of about unit scale in format f
// and the same values widened.
func halfWeights(r *rand.Rand, n int, f kernels.Half) ([]uint16, []float32) {
	w, wf := make([]uint16, n), make([]float32, n)
	for i := range w {
		v := float32(r.NormFloat64() * 0.05)
		if f == kernels.BF16 {
			w[i] = uint16(math.Float32bits(v) >> 16)
		} else {
			w[i] = f32ToF16(v)
		}
	}
	kernels.HalfToF32(wf, w, f)
	return w, wf
}

// f32ToF16 rounds toward zero to binary16 (normal range only: the
// weights here are well inside it).
func f32ToF16(v float32) uint16 {
	u := math.Float32bits(v)
	sign := uint16(u>>16) & 0x8000
	exp := int(u>>23&0xff) - 127 + 15
	if exp <= 0 {
		return sign
	}
	return sign | uint16(exp)<<10 | uint16(u>>13&0x3ff)
}

func randF32(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}
