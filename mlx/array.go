package mlx

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// Array is an n-dimensional array handle. It owns backend storage until
// Free is called (or the Scope it was created in closes). Arrays are
// immutable: every op returns a new Array.
type Array struct {
	shape   []int
	dtype   DType
	backend Backend
	// st is the backend's storage for this array (for the CPU backend a
	// *cpuBuf, for a libmlxc backend an mlx_array handle).
	st    any
	freed bool
	// scope owns the array (nil when none); slot is its index in
	// scope.arrays. Both are guarded by scopeMu.
	scope    *Scope
	slot     int
	detached bool
	// dims holds shape when it has at most 4 axes, which saves an
	// allocation for nearly every array a model makes.
	dims [4]int
}

var liveArrays, detachedArrays atomic.Int64

// LiveArrays is the number of arrays created and not yet freed. Tests use it
// to prove that model code releases every intermediate.
func LiveArrays() int { return int(liveArrays.Load()) }

// DetachedArrays is the number of arrays passed to Detach and not yet
// freed.
func DetachedArrays() int { return int(detachedArrays.Load()) }

// newArray makes an unmaterialised array of the given shape and dtype on
// backend b; the op that calls it must fill a.st through the backend.
func newArray(b Backend, dt DType, shape []int) *Array {
	for _, d := range shape {
		if d < 0 {
			// A copy, so shape itself does not escape: callers may build
			// it on the stack, and newArray copies what it keeps.
			panic(fmt.Sprintf("mlx: negative dimension in shape %v", slices.Clone(shape)))
		}
	}
	a := &Array{dtype: dt, backend: b}
	if n := len(shape); n <= len(a.dims) {
		// cap == len: an append to a.shape must not write into dims.
		a.shape = a.dims[:n:n]
		copy(a.shape, shape)
	} else {
		a.shape = append([]int(nil), shape...)
	}
	liveArrays.Add(1)
	track(a)
	return a
}

// Shape returns a copy of the array's dimensions.
func (a *Array) Shape() []int { a.check("Shape"); return append([]int(nil), a.shape...) }

// Dim returns the size of axis i; negative i counts from the end.
func (a *Array) Dim(i int) int {
	a.check("Dim")
	return a.shape[normAxis("Dim", i, len(a.shape))]
}

// Ndim is the number of axes.
func (a *Array) Ndim() int { a.check("Ndim"); return len(a.shape) }

// Size is the number of elements.
func (a *Array) Size() int { a.check("Size"); return shapeSize(a.shape) }

// DType is the element type.
func (a *Array) DType() DType { a.check("DType"); return a.dtype }

// Backend is the backend that owns the array's storage.
func (a *Array) Backend() Backend { return a.backend }

// Freed reports whether Free has been called.
func (a *Array) Freed() bool { return a.freed }

func (a *Array) String() string {
	if a == nil {
		return "Array(nil)"
	}
	if a.freed {
		return "Array(freed)"
	}
	return fmt.Sprintf("Array(shape=%v, dtype=%v)", a.shape, a.dtype)
}

// Free releases the array's storage. It is safe to call more than once and
// on nil; using a freed array panics. Views (Reshape and friends) share
// storage, which the backend reference-counts, so freeing either side is
// always safe.
func (a *Array) Free() {
	if a == nil || a.freed {
		return
	}
	a.freed = true
	if a.st != nil {
		a.backend.Free(a)
		a.st = nil
	}
	if a.detached {
		detachedArrays.Add(-1)
	} else {
		liveArrays.Add(-1)
	}
}

// Free releases every non-nil array in xs.
func Free(xs ...*Array) {
	for _, x := range xs {
		x.Free()
	}
}

// Eval materialises the given arrays. The CPU backend computes eagerly, so
// this only checks that the arrays are alive; keep calling it where MLX code
// would, so that lazy backends behave identically.
func Eval(xs ...*Array) error {
	if len(xs) == 0 {
		return nil
	}
	for _, x := range xs {
		if x == nil || x.freed {
			return fmt.Errorf("mlx.Eval: %v", x)
		}
	}
	return xs[0].backend.Eval(xs)
}

func (a *Array) check(op string) {
	if a == nil {
		panic("mlx." + op + ": nil array")
	}
	if a.freed {
		panic("mlx." + op + ": use of freed array")
	}
}

func shapeSize(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

func normAxis(op string, ax, ndim int) int {
	if ax < 0 {
		ax += ndim
	}
	if ax < 0 || ax >= ndim {
		panic(fmt.Sprintf("mlx.%s: axis out of range for %d dims", op, ndim))
	}
	return ax
}

// rowStrides are the element strides of a row-major array of shape s.
func rowStrides(s []int) []int {
	st := make([]int, len(s))
	n := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = n
		n *= s[i]
	}
	return st
}
