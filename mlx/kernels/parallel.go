package kernels

import (
	"runtime"
	"sync"
)

// ParallelFor is parallelFor for the mlx package, so every CPU loop shares
// one work-splitting mechanism and its persistent helper.
func ParallelFor(n, align, minChunk int, fn func(lo, hi int)) { parallelFor(n, align, minChunk, fn) }

// parallelFor runs fn over [0,n) in chunks on up to GOMAXPROCS goroutines
// (the caller's included). Chunk boundaries are multiples of align, and no
// chunk is smaller than minChunk (except the last), because below that the
// hand-off costs more than the work; small n stays on the caller.
func parallelFor(n, align, minChunk int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	align = max(align, 1)
	workers := runtime.GOMAXPROCS(0)
	if minChunk > 0 && n/minChunk < workers {
		workers = n / minChunk
	}
	units := (n + align - 1) / align
	workers = min(workers, units)
	if workers <= 1 {
		fn(0, n)
		return
	}
	// The pieces are handed out dynamically (poolJob.run), so a thread
	// that is descheduled (a busy machine) or slower (an efficiency core
	// on Apple silicon) takes fewer of them instead of holding up the call.
	minUnits := max((minChunk+align-1)/align, 1)
	j := &poolJob{n: int64(n), minChunk: int64(minUnits * align), align: int64(align), workers: int64(workers), fn: fn}
	if poolFor(j, workers) {
		return
	}
	// No pool helper to take it (a nested or concurrent call holds the
	// pool, or GOMAXPROCS grew after the pool started): the same job on
	// goroutines of its own.
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j.run()
		}()
	}
	j.run()
	wg.Wait()
}
