//go:build cgo && (amd64 || arm64)

package kernels

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"
)

// BenchmarkHalfDecode replays the 16-bit matmuls of a 0.5B model's decode
// step (per layer the fused q/k/v, o, fused gate/up and down projections,
// then the tied 151936-row output head; 12 layers of distinct weights,
// 630 MB, so nothing is found in cache) with one row of x, alternating
// pass by pass between the kernels (the best for this CPU, and the best
// without AVX-512) and a plain read of the same bytes
// (ceilingRead, split the same way), so every variant sees the same minutes
// of the shared machine. %read is a kernel's bytes per second over the
// read's: the decode target is 80%. cpu-ms is process CPU time per
// pass (the pool's spinning helpers included).
func BenchmarkHalfDecode(b *testing.B) {
	const hidden, inter, qkv, vocab, layers = 896, 4864, 896 + 2*128, 151936, 12
	for _, f := range []Half{BF16, F16} {
		b.Run(f.String(), func(b *testing.B) {
			type mat struct {
				k, n int
				w    []uint16
			}
			r := rand.New(rand.NewPCG(4, 4))
			var mats []mat
			add := func(k, n int) {
				w := make([]uint16, k*n)
				for i := range w {
					w[i] = uint16(r.Uint32()) & 0x3fff // finite, moderate (both formats)
				}
				mats = append(mats, mat{k, n, w})
			}
			for range layers {
				add(hidden, qkv)
				add(hidden, hidden)
				add(hidden, 2*inter)
				add(inter, hidden)
			}
			add(hidden, vocab)
			bytes := 0
			for _, m := range mats {
				bytes += 2 * len(m.w)
			}
			x, out := randSlice(r, inter), make([]float32, vocab)
			variants := []struct {
				name string
				run  func()
			}{
				{"avx2", func() { hmmForce = 2 }},
				{"best", func() { hmmForce = 0 }},
				{"read", nil},
			}
			pass := func(v int) {
				if variants[v].run == nil {
					for _, m := range mats {
						// The weights as 64-bit words: the same bytes.
						p := unsafe.Slice((*uint64)(unsafe.Pointer(&m.w[0])), len(m.w)/4)
						parallelFor(len(p), 1<<9, hmmInlineBytes/8, func(lo, hi int) { ceilingRead(p[lo:hi]) })
					}
					return
				}
				variants[v].run()
				for _, m := range mats {
					if err := HMatmul(x[:m.k], 1, m.k, m.n, m.w, f, true, out[:m.n]); err != nil {
						b.Fatal(err)
					}
				}
			}
			for v := range variants {
				pass(v) // fault pages in, start the pool
			}
			wall := make([]time.Duration, len(variants))
			cpu := make([]float64, len(variants))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for v := range variants {
					c0, t0 := processCPU(), time.Now()
					pass(v)
					wall[v] += time.Since(t0)
					cpu[v] += processCPU() - c0
				}
			}
			b.StopTimer()
			hmmForce = 0
			gbs := func(v int) float64 { return float64(bytes) * float64(b.N) / wall[v].Seconds() / 1e9 }
			read := gbs(len(variants) - 1)
			for v, vr := range variants {
				b.ReportMetric(gbs(v), "GB/s-"+vr.name)
				b.ReportMetric(1e3*cpu[v]/float64(b.N), "cpu-ms-"+vr.name)
				if vr.run != nil {
					b.ReportMetric(100*gbs(v)/read, "%read-"+vr.name)
				}
			}
		})
	}
}
