package mlx_test

import (
	"sync"
	"testing"

	"hark/mlx"
)

func TestDetachExemptsFromScope(t *testing.T) {
	leakFree(t)
	var kept, tmp *mlx.Array
	func() {
		s := mlx.NewScope()
		defer s.Close()
		func() {
			inner := mlx.NewScope()
			defer inner.Close()
			tmp = mlx.Zeros([]int{4}, mlx.Float32)
			kept = mlx.Detach(mlx.AddScalar(tmp, 1))
			inner.Keep(kept) // not the scope's any more: a no-op
		}()
	}()
	if !tmp.Freed() || kept.Freed() {
		t.Fatalf("tmp freed %v, detached freed %v", tmp.Freed(), kept.Freed())
	}
	if mlx.LiveArrays() != 0 || mlx.DetachedArrays() != 1 {
		t.Fatalf("live %d detached %d, want 0 and 1", mlx.LiveArrays(), mlx.DetachedArrays())
	}
	// Detached storage can be updated in place from later scopes.
	func() {
		s := mlx.NewScope()
		defer s.Close()
		mlx.SliceAssign(kept, mlx.Full([]int{2}, 7, mlx.Float32), []int{1}, []int{3}, nil)
	}()
	if got := kept.Float32s(); got[0] != 1 || got[1] != 7 || got[2] != 7 || got[3] != 1 {
		t.Fatalf("after SliceAssign: %v", got)
	}
	mlx.Detach(kept) // idempotent
	kept.Free()
	if mlx.DetachedArrays() != 0 {
		t.Fatalf("detached %d after Free", mlx.DetachedArrays())
	}
}

// Two goroutines run scoped op sequences at the same time; each one's
// scopes must capture only its own arrays.
func TestScopesPerGoroutine(t *testing.T) {
	leakFree(t)
	const workers, iters = 4, 300
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// An unscoped array on this goroutine must survive the other
			// goroutines' scopes closing.
			own := mlx.Full([]int{8}, float64(w), mlx.Float32)
			defer own.Free()
			for i := range iters {
				out := mlx.Scoped(func() []*mlx.Array {
					a := mlx.AddScalar(own, float64(i))
					var b *mlx.Array
					func() {
						s := mlx.NewScope()
						defer s.Close()
						b = s.Keep(mlx.MulScalar(mlx.Exp(mlx.ZerosLike(a)), 2))
					}()
					return []*mlx.Array{mlx.Add(a, b)}
				})
				if got, want := out[0].Float32s()[7], float32(w+i+2); got != want {
					errs <- "wrong value"
					return
				}
				out[0].Free()
				if own.Freed() {
					errs <- "an unscoped array was freed by another goroutine's scope"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
