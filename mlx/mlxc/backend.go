// Package mlxc is Hark's MLX backend: it runs the mlx package's ops on
// Apple's MLX through libmlxc, the MLX C API, loaded at run time (never
// linked), so Hark starts where the library is missing and falls back to
// its cpu backend. On a Mac MLX computes on Metal; where MLX was built
// without Metal (Linux) it uses MLX's own CPU kernels, which is how the
// backend is tested without a Mac.
//
// MLX is lazy: each op adds a node to MLX's graph, and Eval runs mlx_eval.
// MLX's streams are thread-local, so every call goes through one goroutine
// locked to its OS thread (Do).
//
// The bindings (ztable.go) are generated from the mlx-c headers listed in
// funcs.txt: MLXC_HEADERS=<mlx-c checkout>/mlx/c go generate ./mlx/mlxc.
// The generator records the mlx-c version and commit from that checkout
// and the MLX version it pairs with; the loader refuses a library whose
// mlx_version has another major.minor. The tests need HARK_MLXC (the
// library's path) and skip without it.
package mlxc

//go:generate go run ./internal/gen -headers $MLXC_HEADERS -funcs funcs.txt -out ztable.go

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"hark/mlx"
)

// Name is the backend's registered name.
const Name = "mlxc"

func init() { mlx.RegisterBackend(Name, "MLX", func() (mlx.Backend, error) { return Open() }) }

// Backend runs ops on MLX. There is one per process: MLX's device state
// is global.
type Backend struct {
	lib *library
	w   *worker
	s   stream // the default stream of the MLX thread
	gpu bool
}

var (
	openMu sync.Mutex
	opened *Backend
)

// Open loads libmlxc (see candidates for where it looks) and starts the
// MLX thread. It returns the same Backend on every successful call.
func Open() (*Backend, error) {
	openMu.Lock()
	defer openMu.Unlock()
	if opened != nil {
		return opened, nil
	}
	lib, err := load()
	if err != nil {
		return nil, err
	}
	b := &Backend{lib: lib, w: startWorker(lib)}
	var serr error
	b.w.run(func() {
		var avail bool
		if lib.mlx_metal_is_available(&avail) != 0 {
			takeError() // a build without Metal may report it as an error
			avail = false
		}
		b.gpu = avail
		if avail {
			b.s = lib.mlx_default_gpu_stream_new()
		} else {
			// Asking for the GPU stream where there is none is an error.
			b.s = lib.mlx_default_cpu_stream_new()
		}
		if b.s == 0 {
			serr = fmt.Errorf("%s: MLX gave no default stream: %s", lib.path, takeError())
		}
	})
	if serr != nil {
		return nil, serr
	}
	opened = b
	return b, nil
}

// Name implements mlx.Backend.
func (b *Backend) Name() string { return Name }

// Do runs fn on the MLX thread, for callers that use libmlxc directly or
// need a sequence of MLX calls kept together. It returns ctx's error when
// ctx ends before the thread is free; once started, fn runs to its end.
func (b *Backend) Do(ctx context.Context, fn func() error) error { return b.w.do(ctx, fn) }

// Describe implements mlx.Describer.
func (b *Backend) Describe() mlx.DeviceInfo {
	i := mlx.DeviceInfo{Device: "cpu", GPU: b.gpu, Library: b.lib.path,
		Version: fmt.Sprintf("MLX %s (mlx-c bindings %s)", b.lib.version, headersMLXC)}
	if b.gpu {
		i.Device = "gpu"
		i.Detail = "MLX on Metal"
	} else {
		i.Detail = "MLX built without Metal: its own CPU kernels"
	}
	if len(b.lib.missingOptional) > 0 {
		i.Detail += "; lacks optional " + strings.Join(b.lib.missingOptional, ", ")
	}
	return i
}

// The memory calls implement mlx.MemoryManager. MLX's Linux build keeps
// no cache: the cache calls report 0 there.

func (b *Backend) memCall(op string, f func(*uintptr) int32) int64 {
	var v uintptr
	b.w.run(func() { b.check(op, f(&v)) })
	return int64(v)
}

func (b *Backend) ActiveMemory() int64 {
	return b.memCall("ActiveMemory", b.lib.mlx_get_active_memory)
}

func (b *Backend) CacheMemory() int64 {
	return b.memCall("CacheMemory", b.lib.mlx_get_cache_memory)
}

// PeakMemory is the most MLX has held since it loaded.
func (b *Backend) PeakMemory() int64 {
	return b.memCall("PeakMemory", b.lib.mlx_get_peak_memory)
}

func (b *Backend) SetMemoryLimit(bytes int64) {
	b.memCall("SetMemoryLimit", func(old *uintptr) int32 { return b.lib.mlx_set_memory_limit(old, uintptr(max(bytes, 0))) })
}

func (b *Backend) SetCacheLimit(bytes int64) {
	b.memCall("SetCacheLimit", func(old *uintptr) int32 { return b.lib.mlx_set_cache_limit(old, uintptr(max(bytes, 0))) })
}

func (b *Backend) ClearCache() {
	b.w.run(func() { b.check("ClearCache", b.lib.mlx_clear_cache()) })
}

// check turns a failed mlx-c call into the panic the mlx package expects
// from a backend op.
func (b *Backend) check(op string, rc int32) {
	if rc != 0 {
		panic(opError(op, takeError()))
	}
}

func opError(op, msg string) *mlx.OpError {
	err := errors.New(msg)
	l := strings.ToLower(msg)
	if strings.Contains(l, "out of memory") || strings.Contains(l, "malloc") || strings.Contains(l, "allocat") {
		err = fmt.Errorf("%w: %s", mlx.ErrOutOfMemory, msg)
	}
	return &mlx.OpError{Backend: Name, Op: op, Err: err}
}

func unsupported(op, why string) *mlx.OpError {
	return &mlx.OpError{Backend: Name, Op: op, Err: fmt.Errorf("%w: %s", mlx.ErrUnsupported, why)}
}

// Free implements mlx.Backend; the handle is released on the MLX thread
// before its next job.
func (b *Backend) Free(a *mlx.Array) {
	if h, ok := a.Storage().(array); ok && h != 0 {
		b.w.free(h)
	}
}

// Eval implements mlx.Backend: mlx_eval over the arrays' graphs.
func (b *Backend) Eval(xs []*mlx.Array) (err error) {
	defer mlx.CatchOpError(&err)
	b.w.run(func() {
		v := b.lib.mlx_vector_array_new()
		defer b.lib.mlx_vector_array_free(v)
		for _, x := range xs {
			b.check("Eval", b.lib.mlx_vector_array_append_value(v, handle(x)))
		}
		b.check("Eval", b.lib.mlx_eval(v))
	})
	return nil
}

// handle is x's MLX array.
func handle(x *mlx.Array) array {
	if x == nil {
		return 0
	}
	h, ok := x.Storage().(array)
	if !ok {
		panic(fmt.Sprintf("mlxc: %v has no MLX storage (%T)", x, x.Storage()))
	}
	return h
}

// mlxDtype maps Hark's dtypes to MLX's.
func mlxDtype(d mlx.DType) dtype {
	switch d {
	case mlx.Bool:
		return dtBool
	case mlx.Uint8:
		return dtUint8
	case mlx.Uint32:
		return dtUint32
	case mlx.Int32:
		return dtInt32
	case mlx.Float16:
		return dtFloat16
	case mlx.BFloat16:
		return dtBfloat16
	case mlx.Float32:
		return dtFloat32
	}
	panic(fmt.Sprintf("mlxc: no MLX dtype for %v", d))
}
