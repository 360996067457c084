package kernels

import (
	"sync"
	"testing"
)

// TestParallelForCoverage: every index is visited exactly once, chunk
// starts respect the alignment, for awkward n/align/minChunk mixes.
func TestParallelForCoverage(t *testing.T) {
	for _, c := range [][3]int{{1, 1, 1}, {7, 1, 1}, {100, 16, 1}, {1000, 6, 16}, {4096, 64, 64}, {33, 32, 1}, {5, 1, 100}} {
		n, align, minChunk := c[0], c[1], c[2]
		seen := make([]int, n)
		var mu sync.Mutex
		parallelFor(n, align, minChunk, func(lo, hi int) {
			if lo%align != 0 || lo >= hi || hi > n {
				t.Errorf("n=%d align=%d: bad chunk [%d,%d)", n, align, lo, hi)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("n=%d align=%d: index %d visited %d times", n, align, i, s)
			}
		}
	}
}
