package mlx

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Backend executes ops. The package-level op functions validate arguments,
// work out the output shape and dtype, create the output Array and then ask
// the backend of their inputs to fill it. A backend therefore never does
// shape inference or argument checking; it only computes.
//
// Every input array passed to a backend method is alive and belongs to that
// backend; out has its final shape and dtype and no storage yet.
type Backend interface {
	Name() string

	// FromHost fills out from src, a []float32, []uint16 (raw f16/bf16
	// bits), []int32, []uint32, []uint8 or []bool of len out.Size(); src is
	// copied. Raw little-endian bytes of any dtype come as []byte via
	// FromBytes.
	FromHost(out *Array, src any)
	FromBytes(out *Array, raw []byte)
	// CopyToHost writes a's elements into dst, a slice of a's host type as
	// listed for FromHost (bool arrays give []bool), len a.Size().
	CopyToHost(a *Array, dst any)
	Free(a *Array)
	Eval(xs []*Array) error

	Full(out *Array, value float64)
	Arange(out *Array, start, step float64)
	AsType(x, out *Array)
	// View fills out (same element count and dtype) with x's data.
	View(x, out *Array)

	Unary(op UnaryOp, x, out *Array)
	Binary(op BinaryOp, a, b, out *Array) // numpy broadcasting; a, b already have out's compute dtype
	Where(cond, a, b, out *Array)
	Clip(x *Array, lo, hi float64, out *Array)

	Transpose(x *Array, perm []int, out *Array)
	BroadcastTo(x, out *Array)
	Slice(x *Array, start, stride []int, out *Array)
	SliceUpdate(dst, upd *Array, start, stride []int, out *Array)
	// SliceAssign writes upd into dst's slice, replacing dst's contents in
	// place when no view shares its storage (copy-on-write otherwise).
	SliceAssign(dst, upd *Array, start, stride []int)
	Concat(xs []*Array, axis int, out *Array)
	Pad(x *Array, low []int, value float64, out *Array)
	Take(x, idx *Array, axis int, out *Array)
	TakeAlongAxis(x, idx *Array, axis int, out *Array)

	Reduce(op ReduceOp, x *Array, axes []int, out *Array)
	ArgReduce(op ReduceOp, x *Array, axis int, out *Array)
	Cumsum(x *Array, axis int, reverse, inclusive bool, out *Array)
	Sort(x *Array, axis int, arg bool, out *Array)
	TopK(x *Array, k, axis int, arg bool, out *Array)

	// Matmul sets out = a @ b (b transposed when transB). a and b have
	// out's dtype, except that a float16 or bfloat16 b comes as it is
	// when a and out are float32: a 16-bit weight times float32
	// activations, which the backend reads in its own dtype rather than
	// having a widened copy made at every call.
	Matmul(a, b *Array, transB bool, out *Array)
	Softmax(x *Array, axis int, logsumexp bool, out *Array)
	RMSNorm(x, w *Array, eps float32, out *Array)
	// SwiGLU sets out = silu(gate) * up; gate and up are float32 arrays of
	// out's shape.
	SwiGLU(gate, up, out *Array)
	LayerNorm(x, w, b *Array, eps float32, out *Array)
	RoPE(x *Array, p RoPEParams, freqs *Array, out *Array)
	SDPA(q, k, v *Array, scale float32, mask Mask, out *Array)
	Conv1d(x, w *Array, stride, padding, dilation int, out *Array)

	Quantize(w *Array, groupSize, bits int, packed, scales, biases *Array) error
	Dequantize(packed, scales, biases *Array, groupSize, bits int, out *Array)
	QuantizedMatmul(x, w, scales, biases *Array, transpose bool, groupSize, bits int, out *Array)
}

var (
	backendMu      sync.RWMutex
	backends       = map[string]func() (Backend, error){}
	backendTitles  = map[string]string{}
	currentBackend Backend
)

// RegisterBackend makes a backend selectable by name, shown to users as
// title ("CPU", "MLX"; the name when empty). open is called on the first
// SetBackend(name); it may fail (e.g. libmlxc not found).
func RegisterBackend(name, title string, open func() (Backend, error)) {
	backendMu.Lock()
	defer backendMu.Unlock()
	backends[name] = open
	if title != "" {
		backendTitles[name] = title
	}
}

// BackendTitle is the name users see for a registered backend.
func BackendTitle(name string) string {
	backendMu.RLock()
	defer backendMu.RUnlock()
	if t, ok := backendTitles[name]; ok {
		return t
	}
	return name
}

// Backends lists the registered backend names, sorted.
func Backends() []string {
	backendMu.RLock()
	defer backendMu.RUnlock()
	names := make([]string, 0, len(backends))
	for n := range backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SetBackend selects the backend used by array-creating functions from now
// on. Arrays keep the backend they were created with.
func SetBackend(name string) error {
	backendMu.RLock()
	open, ok := backends[name]
	backendMu.RUnlock()
	if !ok {
		return fmt.Errorf("mlx: unknown backend %q (available: %s)", name, strings.Join(Backends(), ", "))
	}
	b, err := open()
	if err != nil {
		return fmt.Errorf("mlx: backend %q: %w", name, err)
	}
	backendMu.Lock()
	currentBackend = b
	backendMu.Unlock()
	return nil
}

// DefaultBackend returns the current backend. On first use it makes the
// choice Select("", "") makes (HARK_BACKEND, else auto); a HARK_BACKEND
// naming no backend panics with the list of available ones, because
// silently running on another device would be worse. Apps call Select at
// startup to get that as an error instead.
func DefaultBackend() Backend {
	backendMu.RLock()
	b := currentBackend
	backendMu.RUnlock()
	if b != nil {
		return b
	}
	if _, err := Select("", ""); err != nil {
		panic(err.Error())
	}
	backendMu.RLock()
	defer backendMu.RUnlock()
	return currentBackend
}

// CurrentBackend is the selected backend, or nil before the first
// selection.
func CurrentBackend() Backend {
	backendMu.RLock()
	defer backendMu.RUnlock()
	return currentBackend
}

// backendOf returns the common backend of the inputs of op, panicking when
// they are mixed or freed.
func backendOf(op string, xs ...*Array) Backend {
	var b Backend
	for _, x := range xs {
		if x == nil {
			continue
		}
		x.check(op)
		if b == nil {
			b = x.backend
		} else if x.backend != b {
			panic(fmt.Sprintf("mlx.%s: arrays from backends %q and %q mixed", op, b.Name(), x.backend.Name()))
		}
	}
	if b == nil {
		return DefaultBackend()
	}
	return b
}
