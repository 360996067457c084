package mlx

import (
	"runtime"

	"hark/mlx/kernels"
)

// parallelFor runs fn over [0,n) through the kernels' shared splitter (and
// its persistent helper goroutine). work is the rough cost of one item in "element
// operations"; loops whose total is below minParallelWork run inline because
// starting goroutines costs more than it saves.
func parallelFor(n, work int, fn func(lo, hi int)) {
	if serial(n, work) {
		fn(0, n)
		return
	}
	// Chunks below minParallelWork cost more to hand off than they save.
	kernels.ParallelFor(n, 1, (minParallelWork+max(work, 1)-1)/max(work, 1), fn)
}

// minParallelWork is the total work below which loops stay on the caller.
const minParallelWork = 1 << 15

// serial reports whether parallelFor(n, work, ...) would run inline. A hot
// op can test it first and call its row function directly, without making
// the closure (an allocation) that parallelFor needs.
func serial(n, work int) bool {
	return runtime.GOMAXPROCS(0) <= 1 || n < 2 || n*max(work, 1) < minParallelWork
}
