package mlx

import (
	"runtime"
	"sync"
)

// parallelFor splits [0,n) into contiguous chunks and runs fn on them across
// GOMAXPROCS goroutines. work is the rough cost of one item in "element
// operations"; loops whose total is below minParallelWork run inline because
// starting goroutines costs more than it saves.
func parallelFor(n, work int, fn func(lo, hi int)) {
	const minParallelWork = 1 << 15
	p := runtime.GOMAXPROCS(0)
	if p <= 1 || n < 2 || n*max(work, 1) < minParallelWork {
		fn(0, n)
		return
	}
	chunks := min(p, n)
	var wg sync.WaitGroup
	wg.Add(chunks - 1)
	for c := 1; c < chunks; c++ {
		lo, hi := n*c/chunks, n*(c+1)/chunks
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	fn(0, n/chunks)
	wg.Wait()
}
