package mlxc_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"hark/mlx"
)

// Do runs on one thread, gives up when ctx ends before the thread is
// free, and returns fn's error.
func TestDo(t *testing.T) {
	b := needMLXC(t)
	ctx := context.Background()
	want := errors.New("from fn")
	if err := b.Do(ctx, func() error { return want }); err != want {
		t.Fatalf("Do returned %v, want fn's error", err)
	}
	busy, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = b.Do(ctx, func() error { close(busy); <-release; return nil })
	}()
	<-busy
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	ran := false
	if err := b.Do(cctx, func() error { ran = true; return nil }); !errors.Is(err, context.DeadlineExceeded) || ran {
		t.Fatalf("Do on a busy thread with an ended context: %v (ran %v)", err, ran)
	}
	close(release)
	if tid1, tid2 := threadID(t, b), threadID(t, b); tid1 != tid2 {
		t.Fatalf("MLX calls ran on threads %d and %d", tid1, tid2)
	}
}

// Ops from many goroutines at once all go through the MLX thread and give
// the results they give one at a time.
func TestConcurrentOps(t *testing.T) {
	needMLXC(t)
	mlx.SetBackend("mlxc")
	defer mlx.SetBackend("cpu")
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := mlx.NewScope()
			defer s.Close()
			x := mlx.FromSlice(uniform(uint64(g), 64, -1, 1), 8, 8)
			for i := 0; i < 20; i++ {
				y := mlx.Softmax(mlx.Matmul(x, x), -1)
				sum := mlx.Sum(y, false).Item()
				if sum < 7.999 || sum > 8.001 {
					errs <- "softmax rows do not sum to 1"
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
	runtime.GC()
}
