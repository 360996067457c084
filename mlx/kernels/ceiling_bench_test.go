package kernels

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// The ceilings: what this machine does at best, measured in the same run
// as every other row of `make bench` (build/benchtable.awk prints them
// beside the rows), since on a shared machine only ratios within one run
// mean anything. Each runs on GOMAXPROCS threads, as the kernels do.

// BenchmarkCeilingReadBandwidth is ReadBandwidth on a 256 MB buffer, the
// best of b.N passes of each read loop: the memory read bandwidth decode
// is bound by.
func BenchmarkCeilingReadBandwidth(b *testing.B) {
	buf := make([]uint64, 32<<20)
	for i := range buf {
		buf[i] = uint64(i)
	}
	readPass(buf, ceilingRead) // fault the pages in, start the pool
	b.ResetTimer()
	b.ReportMetric(ReadBandwidth(buf, b.N), "GB/s")
}

// BenchmarkCeilingSgemm is Sgemm on 1024×1024 matrices, large enough to
// reach its peak: the float32 compute ceiling prefill and 16-bit weights
// are held to.
func BenchmarkCeilingSgemm(b *testing.B) {
	const n = 1024
	r := rand.New(rand.NewPCG(1, 1))
	x, y, z := randSlice(r, n*n), randSlice(r, n*n), make([]float32, n*n)
	Sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
	b.ResetTimer()
	for range b.N {
		Sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
	}
	b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkCeilingInt8Dot runs int8 dot products on every thread
// (VPDPBUSD with AVX-512 VNNI, as the 4-bit kernels use, on operands held
// in registers; else AVX2 or NEON widening multiplies on operands in L1):
// the integer compute ceiling, in multiply-adds counted as two
// operations. Each call runs milliseconds, so handing the work to the
// threads costs little of its CPU time.
func BenchmarkCeilingInt8Dot(b *testing.B) {
	const n, reps = 8 << 10, 1 << 16
	workers := runtime.GOMAXPROCS(0)
	as, bs := make([][]uint8, workers), make([][]int8, workers)
	for w := range workers {
		as[w], bs[w] = make([]uint8, n), make([]int8, n)
		for i := range n {
			as[w][i], bs[w][i] = uint8(i%127), int8(i%255-127)
		}
	}
	run := func() {
		parallelFor(workers, 1, 1, func(lo, hi int) {
			for w := lo; w < hi; w++ {
				ceilingDot8(as[w], bs[w], reps)
			}
		})
	}
	run()
	b.ResetTimer()
	cpu0 := processCPU()
	for range b.N {
		run()
	}
	ops := 2 * float64(n) * reps * float64(workers) * float64(b.N)
	b.ReportMetric(ops/b.Elapsed().Seconds()/1e9, "GOP/s")
	// Per CPU-second too: on a shared machine the wall figure drops when
	// a worker waits for a core, the CPU-time one much less, and the
	// kernels' benchmarks report CPU time (BenchmarkPackedQ8's GOP/cpu-s).
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(ops/cpu/1e9, "GOP/cpu-s")
	}
}
