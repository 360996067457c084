package kernels

import (
	"runtime"
	"time"
)

// ReadBandwidth is the memory read ceiling in GB/s: the best of passes
// reads of buf (far larger than the caches) with the widest loads the CPU
// has, on the kernels' threads. Decode reads its weights and writes
// almost nothing, so this is the bandwidth it is bound by. It is the one
// read ceiling of the benchmarks (BenchmarkCeilingReadBandwidth, and the
// %read of the model benchmarks through mlxtest), and it follows the
// method of a plain C streaming-read probe (pthreads, integer sums, best
// of a few passes) so that the two agree when run in turn:
//   - each thread reads one fixed, equal slice (no pieces handed out
//     dynamically; a pass is one pool call);
//   - the figure is the best pass, not the mean: a ceiling is what the
//     machine can do, and on a shared machine the mean also counts the
//     passes where another process held a core or the memory bus, which
//     the rows measured against it would then seem to beat.
func ReadBandwidth(buf []uint64, passes int) float64 {
	best := time.Duration(1 << 62)
	for range max(passes, 1) {
		t0 := time.Now()
		readPass(buf)
		best = min(best, time.Since(t0))
	}
	return 8 * float64(len(buf)) / best.Seconds() / 1e9
}

// readPass reads buf once, one equal slice per thread.
func readPass(buf []uint64) {
	workers := runtime.GOMAXPROCS(0)
	parallelFor(workers, 1, 1, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			if s := buf[w*len(buf)/workers : (w+1)*len(buf)/workers]; len(s) > 0 {
				ceilingRead(s)
			}
		}
	})
}
