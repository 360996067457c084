package mlxtest

import (
	"runtime"
	"sync"
	"time"

	"hark/mlx/kernels"
)

// Memory bandwidth references for benchmarks that report how close a
// memory-bound loop (LLM decode) comes to the machine, measured in the
// same run as the loop itself: on shared hardware the available
// bandwidth drifts by tens of percent from one minute to the next.
//
// Both stream a 256 MB buffer (far beyond any cache) split over GOMAXPROCS
// goroutines and report the best of a few passes, in GB/s of bytes read:
//   - CopyBandwidth copies it (reads and writes; Go's memmove);
//   - ReadBandwidth only reads it (kernels.ReadBandwidth), the access
//     pattern of decode, which reads weights and writes almost nothing.
// On the 2-core CI machine a read-only stream reaches about twice the
// read-byte rate of a copy.

const bandwidthBytes = 256 << 20

var (
	bwOnce sync.Once
	bwSrc  []uint64
	bwDst  []uint64
)

func bwBuffers() {
	bwOnce.Do(func() {
		bwSrc = make([]uint64, bandwidthBytes/8)
		bwDst = make([]uint64, bandwidthBytes/8)
		for i := range bwSrc {
			bwSrc[i] = uint64(i)
		}
		copy(bwDst, bwSrc)
	})
}

func bestOf(passes int, pass func()) float64 {
	best := time.Duration(1 << 62)
	for range passes {
		t0 := time.Now()
		pass()
		best = min(best, time.Since(t0))
	}
	return float64(bandwidthBytes) / best.Seconds() / 1e9
}

// split runs fn on GOMAXPROCS contiguous slices of [0, n).
func split(n int, fn func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for i := range w {
		wg.Add(1)
		go func() { defer wg.Done(); fn(i*n/w, (i+1)*n/w) }()
	}
	wg.Wait()
}

// CopyBandwidth is the read-byte rate of a parallel copy, in GB/s.
func CopyBandwidth() float64 {
	bwBuffers()
	return bestOf(5, func() { split(len(bwSrc), func(lo, hi int) { copy(bwDst[lo:hi], bwSrc[lo:hi]) }) })
}

// ReadBandwidth is the rate of a parallel read-only pass, in GB/s: the
// kernels' read ceiling (kernels.ReadBandwidth), the one the benchmark
// table's ceiling row measures too, so a model's %read and its share of
// that row agree.
func ReadBandwidth() float64 {
	bwBuffers()
	return kernels.ReadBandwidth(bwSrc, 5)
}

// ReadTime is how long the read ceiling's loops take to read bytes
// (kernels.ReadTime), going round the 256 MB buffer as often as needed.
func ReadTime(bytes int64) time.Duration {
	bwBuffers()
	return kernels.ReadTime(bwSrc, bytes)
}
