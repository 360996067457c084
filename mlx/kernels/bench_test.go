package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Benchmarks report throughput under shared metric names so a script can
// tabulate them: "GFLOP/s" for matrix products, "GB/s" for memory-bound
// kernels (bytes of quantized weights + scales + biases read, or bytes
// copied).

func benchSgemm(b *testing.B, impl func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int)) {
	for _, n := range []int{512, 2048} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			x, y, z := randSlice(r, n*n), randSlice(r, n*n), make([]float32, n*n)
			impl(false, false, n, n, n, 1, x, n, y, n, 0, z, n) // warm up threads and pages
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				impl(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
			}
			b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkSgemm(b *testing.B) { benchSgemm(b, Sgemm) }

func BenchmarkSgemmGo(b *testing.B) { benchSgemm(b, sgemmGo) }

func BenchmarkQGemv(b *testing.B) {
	for _, sh := range [][2]int{{4096, 4096}, {4096, 14336}} {
		k, n := sh[0], sh[1]
		b.Run(fmt.Sprintf("%dx%d_q4_g64", k, n), func(b *testing.B) {
			benchQMatmul(b, 1, k, n, 4, 64, QMatmul)
		})
	}
}

// BenchmarkQGemvSmall covers the decode shapes of a 0.5B model (hidden
// 896, MLP 4864), where the per-call fixed cost is a large share.
func BenchmarkQGemvSmall(b *testing.B) {
	for _, sh := range [][2]int{{896, 128}, {896, 896}, {896, 4864}, {4864, 896}} {
		k, n := sh[0], sh[1]
		b.Run(fmt.Sprintf("%dx%d_q4_g64", k, n), func(b *testing.B) {
			benchQMatmul(b, 1, k, n, 4, 64, QMatmul)
		})
	}
}

func benchQMatmul(b *testing.B, m, k, n, bits, gs int, impl func([]float32, int, int, int, []uint32, []float32, []float32, int, int, bool, []float32) error) {
	r := rand.New(rand.NewPCG(2, 2))
	w := randSlice(r, n*k)
	packed, scales, biases, err := Quantize(w, n, k, gs, bits)
	if err != nil {
		b.Fatal(err)
	}
	w = nil
	x, out := randSlice(r, m*k), make([]float32, m*n)
	bytes := float64(4*len(packed) + 4*len(scales) + 4*len(biases))
	_ = impl(x, m, k, n, packed, scales, biases, gs, bits, true, out)
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		if err := impl(x, m, k, n, packed, scales, biases, gs, bits, true, out); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(cpu*1e6/float64(b.N), "cpu-us/op")
		b.ReportMetric(bytes*float64(b.N)/cpu/1e9, "GB/cpu-s")
	}
	b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkQGemvGo is the portable path on the same shapes, for comparison.
func BenchmarkQGemvGo(b *testing.B) {
	goImpl := func(x []float32, m, k, n int, w []uint32, s, bi []float32, gs, bits int, tr bool, out []float32) error {
		qmatmulGo(x, m, k, n, qmat{w, s, bi, gs, bits}, tr, out)
		return nil
	}
	for _, sh := range [][2]int{{4096, 4096}, {4096, 14336}} {
		b.Run(fmt.Sprintf("%dx%d_q4_g64", sh[0], sh[1]), func(b *testing.B) { benchQMatmul(b, 1, sh[0], sh[1], 4, 64, goImpl) })
	}
}

// BenchmarkQMatmul covers prefill-sized batches (m > 1).
func BenchmarkQMatmul(b *testing.B) {
	for _, m := range []int{4, 32, 256} {
		b.Run(fmt.Sprintf("m%d_4096x4096_q4_g64", m), func(b *testing.B) { benchQMatmul(b, m, 4096, 4096, 4, 64, QMatmul) })
	}
}

// BenchmarkMemcpy measures copy bandwidth on a 256 MB buffer (far beyond
// cache), split over GOMAXPROCS goroutines like the kernels are. GB/s
// counts bytes read (the same convention as QGemv's bytes of weights).
func BenchmarkMemcpy(b *testing.B) {
	const size = 256 << 20
	src, dst := make([]byte, size), make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src)
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		parallelFor(size, 1<<16, 1<<20, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
	}
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/cpu/1e9, "GB/cpu-s")
	}
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkQGemvLayers runs the seven projections of 8 layers of a 0.5B
// model (hidden 896, MLP 4864, 2 KV heads) in decode order, one op being
// one token through all of them. The layers hold separate copies of the
// weights (~120 MB), so, unlike BenchmarkQGemvSmall, every call streams its
// weights from memory as real decode does.
func BenchmarkQGemvLayers(b *testing.B) {
	const layers, gs, bits = 8, 64, 4
	r := rand.New(rand.NewPCG(3, 3))
	type proj struct {
		k, n                   int
		packed                 []uint32
		scales, biases, x, out []float32
	}
	var shapes []proj
	for _, sh := range [][2]int{{896, 896}, {896, 128}, {896, 128}, {896, 896}, {896, 4864}, {896, 4864}, {4864, 896}} {
		k, n := sh[0], sh[1]
		packed, scales, biases, err := Quantize(randSlice(r, n*k), n, k, gs, bits)
		if err != nil {
			b.Fatal(err)
		}
		shapes = append(shapes, proj{k, n, packed, scales, biases, randSlice(r, k), make([]float32, n)})
	}
	var ops []proj
	bytes := 0.0
	for range layers {
		for _, p := range shapes {
			p.packed = append([]uint32(nil), p.packed...)
			p.scales = append([]float32(nil), p.scales...)
			p.biases = append([]float32(nil), p.biases...)
			ops = append(ops, p)
			bytes += float64(4 * (len(p.packed) + len(p.scales) + len(p.biases)))
		}
	}
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		for _, p := range ops {
			if err := QMatmul(p.x, 1, p.k, p.n, p.packed, p.scales, p.biases, gs, bits, true, p.out); err != nil {
				b.Fatal(err)
			}
		}
	}
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(cpu*1e6/float64(b.N), "cpu-us/op")
		b.ReportMetric(bytes*float64(b.N)/cpu/1e9, "GB/cpu-s")
	}
	b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkPackedQGemv runs decode shapes of a 0.5B model in the packed
// 4-bit layout and, for comparison, the MLX layout, on one matrix each
// (from the last level cache where it fits: see the Cold variant).
func BenchmarkPackedQGemv(b *testing.B) {
	for _, sh := range [][2]int{{896, 1152}, {896, 9728}, {4864, 896}} {
		k, n := sh[0], sh[1]
		if !PackedQ4Supported(k, 64) {
			b.Skip("no packed 4-bit kernel on this CPU")
		}
		b.Run(fmt.Sprintf("%dx%d_q4_g64", k, n), func(b *testing.B) {
			benchQMatmul(b, 1, k, n, 4, 64, func(x []float32, m, k, n int, w []uint32, s, bi []float32, gs, bits int, _ bool, out []float32) error {
				return PackedQ4Matmul(x, m, packedFor(w, s, bi, n, k, gs), out)
			})
		})
		b.Run(fmt.Sprintf("%dx%d_q4_g64_mlx", k, n), func(b *testing.B) { benchQMatmul(b, 1, k, n, 4, 64, QMatmul) })
	}
}

// packedFor packs a benchmark matrix once per (w) slice.
var packedCache = map[*uint32]PackedQ4{}

func packedFor(w []uint32, s, bi []float32, n, k, gs int) PackedQ4 {
	if p, ok := packedCache[&w[0]]; ok {
		return p
	}
	p, err := PackQ4(w, s, bi, n, k, gs, make([]byte, PackedQ4Bytes(n, k, gs)))
	if err != nil {
		panic(err)
	}
	packedCache[&w[0]] = p
	return p
}

// BenchmarkPackedQGemvCold runs each decode shape of a 0.5B model on 200
// MB of copies in turn, so every call streams its weights from DRAM, as
// at decode, and pays the fixed costs of a call (preparing x, handing
// work to the helper) as decode does.
func BenchmarkPackedQGemvCold(b *testing.B) {
	for _, sh := range [][2]int{{896, 1152}, {896, 896}, {896, 9728}, {4864, 896}} {
		k, n := sh[0], sh[1]
		if !PackedQ4Supported(k, 64) {
			b.Skip("no packed 4-bit kernel on this CPU")
		}
		b.Run(fmt.Sprintf("%dx%d_q4_g64", k, n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 3))
			w, s, bi, err := Quantize(randSlice(r, n*k), n, k, 64, 4)
			if err != nil {
				b.Fatal(err)
			}
			one := PackedQ4Bytes(n, k, 64)
			copies := max(2, (200<<20)/one)
			ps := make([]PackedQ4, copies)
			for i := range ps {
				if ps[i], err = PackQ4(w, s, bi, n, k, 64, make([]byte, one)); err != nil {
					b.Fatal(err)
				}
			}
			x, out := randSlice(r, k), make([]float32, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := PackedQ4Matmul(x, 1, ps[i%copies], out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(one)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkQMatmulPrefill is a 512-token prompt through the matmul shapes
// of a 0.5B model (fused q/k/v, o, fused gate/up, down), 4-bit g64: compare
// its GFLOP/s with BenchmarkSgemm's in the same run.
func BenchmarkQMatmulPrefill(b *testing.B) {
	for _, sh := range [][2]int{{896, 1152}, {896, 896}, {896, 9728}, {4864, 896}} {
		k, n := sh[0], sh[1]
		b.Run(fmt.Sprintf("m512_%dx%d_q4_g64", k, n), func(b *testing.B) { benchQMatmul(b, 512, k, n, 4, 64, QMatmul) })
	}
}
