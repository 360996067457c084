package kernels

import (
	"runtime"
	"sync"
)

// parallelFor splits [0,n) into at most GOMAXPROCS contiguous chunks whose
// boundaries are multiples of align (except the last) and runs fn on each
// chunk concurrently. Work smaller than minChunk per worker stays on the
// calling goroutine, because goroutine hand-off costs more than tiny loops.
func parallelFor(n, align, minChunk int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if align < 1 {
		align = 1
	}
	workers := runtime.GOMAXPROCS(0)
	if minChunk > 0 && n/minChunk < workers {
		workers = n / minChunk
	}
	units := (n + align - 1) / align
	if workers > units {
		workers = units
	}
	if workers <= 1 {
		fn(0, n)
		return
	}
	per := (units + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per * align {
		hi := min(lo+per*align, n)
		if hi >= n {
			// Run the last chunk on this goroutine: one fewer hand-off.
			fn(lo, hi)
			break
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, hi)
	}
	wg.Wait()
}
