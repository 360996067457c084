package cpu

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
	kernels.ParallelFor(n, 1, minChunk(work), fn)
}

// minParallelWork is the least work worth handing to another goroutine.
const minParallelWork = 1 << 15

// minChunk is the fewest items of cost work that make minParallelWork:
// smaller chunks cost more to hand off than they save.
func minChunk(work int) int { return (minParallelWork + max(work, 1) - 1) / max(work, 1) }

// serial reports whether parallelFor(n, work, ...) runs inline: one
// processor, or too few items for two chunks. A hot op can test it first
// and call its row function directly, without making the closure (an
// allocation) that parallelFor needs.
func serial(n, work int) bool {
	return runtime.GOMAXPROCS(0) <= 1 || n < 2*minChunk(work)
}
