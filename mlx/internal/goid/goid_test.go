package goid

import (
	"sync"
	"testing"
)

// Current must be stable within a goroutine and differ between goroutines
// that are alive at the same time.
func TestCurrentDistinguishesGoroutines(t *testing.T) {
	const n = 8
	ids := make([]uintptr, n)
	var ready, done sync.WaitGroup
	ready.Add(n)
	done.Add(n)
	release := make(chan struct{})
	for i := range n {
		go func() {
			defer done.Done()
			ids[i] = Current()
			ready.Done()
			<-release // stay alive until all have read their id
			if Current() != ids[i] {
				t.Errorf("goroutine %d: id changed", i)
			}
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()
	seen := map[uintptr]bool{Current(): true}
	for i, id := range ids {
		if id == 0 || seen[id] {
			t.Fatalf("goroutine %d: id %#x is zero or shared", i, id)
		}
		seen[id] = true
	}
}
