package kernels

import (
	"runtime"
	"sync/atomic"
	"time"
)

// ReadBandwidth is the memory read ceiling in GB/s: the best of passes
// reads of buf (far larger than the caches) by each of two read loops, on
// the kernels' threads. Decode reads its weights and writes almost
// nothing, so this is the bandwidth it is bound by. It is the one read
// ceiling of the benchmarks (BenchmarkCeilingReadBandwidth, and the %read
// of the model benchmarks through mlxtest). It follows the method of a
// plain C streaming-read probe (pthreads, integer sums of AVX2 loads, best
// of a few passes), and agrees with it when the two run in turn:
//   - each thread reads one fixed, equal slice (no pieces handed out
//     dynamically; a pass is one pool call);
//   - the figure is the best pass, not the mean: a ceiling is what the
//     machine can do, and on a shared machine the mean also counts the
//     passes where another process held a core or the memory bus, which
//     the rows measured against it would then seem to beat.
//
// The two loops are the wide one (ceilingRead: 256-bit loads, as the
// probe) and a scalar one (8-byte loads, eight sums). On the 2-vCPU Zen 4
// machine the scalar loop read 0-28% faster than the wide one (and so
// than the probe) in 11 of 12 same-process rounds, the most when the
// machine was busiest, and bf16 decode's AVX-512 loads read faster than
// the wide loop too: the ceiling takes whichever reads faster, so no row
// seems to beat it by using other loads.
func ReadBandwidth(buf []uint64, passes int) float64 {
	best := time.Duration(1 << 62)
	for range max(passes, 1) {
		for _, read := range readLoops {
			t0 := time.Now()
			readPass(buf, read)
			best = min(best, time.Since(t0))
		}
	}
	return 8 * float64(len(buf)) / best.Seconds() / 1e9
}

// ReadTime is how long reading bytes of buf takes, as ReadBandwidth reads
// (its threads, the faster of its two loops), going round buf as many
// times as that takes: a read ceiling for one step of a loop that reads
// that many bytes, measured right after the step, so that both see the
// same machine (the model benchmarks' %readPaired).
func ReadTime(buf []uint64, bytes int64) time.Duration {
	words := bytes / 8
	best := time.Duration(1 << 62)
	for _, read := range readLoops {
		t0 := time.Now()
		for left := words; left > 0; left -= int64(len(buf)) {
			readPass(buf[:min(left, int64(len(buf)))], read)
		}
		best = min(best, time.Since(t0))
	}
	return best
}

// readLoops are the read loops ReadBandwidth takes the best of.
var readLoops = []func([]uint64) uint64{ceilingRead, readScalar}

// readSink keeps the scalar loop's sums live.
var readSink atomic.Uint64

// readPass reads buf once with read, one equal slice per thread.
func readPass(buf []uint64, read func([]uint64) uint64) {
	workers := runtime.GOMAXPROCS(0)
	parallelFor(workers, 1, 1, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			if s := buf[w*len(buf)/workers : (w+1)*len(buf)/workers]; len(s) > 0 {
				readSink.Add(read(s))
			}
		}
	})
}

// readScalar sums s with eight independent sums of 8-byte loads, one
// cache line a step.
func readScalar(s []uint64) uint64 {
	var a0, a1, a2, a3, a4, a5, a6, a7 uint64
	i := 0
	for ; i+8 <= len(s); i += 8 {
		a0 += s[i]
		a1 += s[i+1]
		a2 += s[i+2]
		a3 += s[i+3]
		a4 += s[i+4]
		a5 += s[i+5]
		a6 += s[i+6]
		a7 += s[i+7]
	}
	for ; i < len(s); i++ {
		a0 += s[i]
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
}
