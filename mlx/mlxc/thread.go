package mlxc

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// Since MLX 0.31 streams are thread-local, so every MLX call runs on one
// goroutine locked to its OS thread. Backend methods hand it closures and
// wait; data crosses threads only as host copies of evaluated arrays.
type worker struct {
	jobs chan *job
	// frees collects arrays released from any goroutine; the worker
	// frees them before its next job, so Free never waits.
	freeMu sync.Mutex
	frees  []array
}

type job struct {
	fn   func()
	done chan any // the panic value, or nil
}

var jobPool = sync.Pool{New: func() any { return &job{done: make(chan any, 1)} }}

func startWorker(lib *library) *worker {
	w := &worker{jobs: make(chan *job)}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread holds MLX's streams
		for j := range w.jobs {
			w.drainFrees(lib)
			j.done <- runJob(j.fn)
		}
	}()
	return w
}

func runJob(fn func()) (p any) {
	defer func() {
		if r := recover(); r != nil {
			p = r
		}
	}()
	fn()
	return nil
}

// run executes fn on the MLX thread and re-raises its panic (an
// *mlx.OpError) on the caller's goroutine.
func (w *worker) run(fn func()) {
	j := jobPool.Get().(*job)
	j.fn = fn
	w.jobs <- j
	p := <-j.done
	j.fn = nil
	jobPool.Put(j)
	if p != nil {
		panic(p)
	}
}

// do is run that gives up waiting for the thread when ctx ends first;
// once fn has started it runs to the end (MLX calls cannot be abandoned).
func (w *worker) do(ctx context.Context, fn func() error) (err error) {
	j := &job{done: make(chan any, 1)}
	j.fn = func() { err = fn() }
	select {
	case w.jobs <- j:
	case <-ctx.Done():
		return ctx.Err()
	}
	if p := <-j.done; p != nil {
		if e, ok := p.(error); ok {
			return e
		}
		return fmt.Errorf("mlxc: %v", p)
	}
	return err
}

func (w *worker) free(a array) {
	w.freeMu.Lock()
	w.frees = append(w.frees, a)
	w.freeMu.Unlock()
}

func (w *worker) drainFrees(lib *library) {
	w.freeMu.Lock()
	fs := w.frees
	w.frees = nil
	w.freeMu.Unlock()
	for _, a := range fs {
		lib.mlx_array_free(a)
	}
}
