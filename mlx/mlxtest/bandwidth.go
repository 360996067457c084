package mlxtest

import (
	"runtime"
	"sync"
	"time"
)

// Memory bandwidth references for benchmarks that report how close a
// memory-bound loop (LLM decode) comes to the machine, measured in the
// same run as the loop itself: on shared hardware the available
// bandwidth drifts by tens of percent from one minute to the next.
//
// Both stream a 256 MB buffer (far beyond any cache) split over GOMAXPROCS
// goroutines and report the best of a few passes, in GB/s of bytes read:
//   - CopyBandwidth copies it (reads and writes; Go's memmove);
//   - ReadBandwidth only reads it (sums words), the access pattern of
//     decode, which reads weights and writes almost nothing.
// On the 2-core CI machine a read-only stream reaches about twice the
// read-byte rate of a copy.

const bandwidthBytes = 256 << 20

var (
	bwOnce   sync.Once
	bwSrc    []uint64
	bwDst    []uint64
	bwResult uint64
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

// ReadBandwidth is the rate of a parallel read-only pass, in GB/s.
func ReadBandwidth() float64 {
	bwBuffers()
	return bestOf(5, func() {
		var mu sync.Mutex
		split(len(bwSrc), func(lo, hi int) {
			s := sumWords(bwSrc[lo:hi])
			mu.Lock()
			bwResult += s
			mu.Unlock()
		})
	})
}

// sumWords reads s with eight independent sums, enough loads in flight for
// the loop to be bound by memory rather than by its adds.
func sumWords(s []uint64) uint64 {
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
