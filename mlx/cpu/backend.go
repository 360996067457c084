package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"

	"hark/mlx"
)

// cpuBackend is the pure-Go backend. It computes every op eagerly at call
// time, so Eval has nothing to do.
type cpuBackend struct{}

// cpuBuf is the storage of a CPU array: one typed slice (float32 for f32,
// uint16 bits for f16/bf16, int32, uint32, or uint8 for u8 and bool), shared
// by views and reference-counted so freeing either side is safe.
type cpuBuf struct {
	data   any
	refs   atomic.Int32
	pooled bool   // data came from newF32 and goes back when refs reach 0
	mapped []byte // data lives in this mapping (Resident), unmapped then
	// parent, when set, owns data: this buffer is a contiguous window
	// onto it (a view read in place) and holds one reference to it.
	parent *cpuBuf
}

func (cpuBackend) Name() string { return "cpu" }

// cpuView is a strided window onto another array's storage; Slice makes
// them in O(1). Ops read arrays through cb, which turns a view into a
// private contiguous buffer on first use; attention reads f32 views in
// place (a KV-cache prefix is a view that is never copied).
type cpuView struct {
	buf     *cpuBuf
	off     int
	strides []int
	// dims holds strides for up to 4 axes (nearly every view a model
	// makes), saving an allocation per slice.
	dims [4]int
}

// cb returns a's contiguous storage, materialising a view first. Call it
// on the goroutine that runs the op, before fanning work out.
func cb(a *mlx.Array) *cpuBuf {
	switch s := a.Storage().(type) {
	case *cpuBuf:
		return s
	case *cpuView:
		n, inPlace := window(a, s)
		if inPlace {
			// The view's reference to the storage passes to the window.
			w := &cpuBuf{data: sliceData(s.buf.data, s.off, s.off+n), parent: s.buf}
			w.refs.Store(1)
			a.SetStorage(w)
			return w
		}
		var d any
		if a.DType() == mlx.Float32 {
			d = newF32(n)
		} else {
			d = allocData(a.DType(), n)
		}
		if n > 0 {
			gatherAny(d, s.buf.data, makeStrided(a.Dims(), s.strides), s.off)
		}
		releaseBuf(s.buf)
		if a.DType() == mlx.Float32 {
			setPooledF32(a, d.([]float32))
		} else {
			setData(a, d)
		}
		return a.Storage().(*cpuBuf)
	}
	panic("mlx: cpu: array has no storage")
}

// window reports whether view v of a is a contiguous window of its storage
// that an op can read in place (the parts of a split, the head split and
// merge at decode), with a's element count.
func window(a *mlx.Array, v *cpuView) (n int, inPlace bool) {
	n = mlx.ShapeSize(a.Dims())
	return n, n > 0 && rowMajor(a.Dims(), v.strides)
}

func releaseBuf(b *cpuBuf) {
	if b.refs.Add(-1) == 0 {
		if b.parent != nil {
			releaseBuf(b.parent)
			b.parent, b.data = nil, nil
			return
		}
		if b.pooled {
			putF32(b.data.([]float32))
		}
		if b.mapped != nil {
			// Failure would mean a mapping mapAnon did not make;
			// TestMapAnonHugeAlignment checks that unmap succeeds.
			_ = unmap(b.mapped)
			b.mapped = nil
		}
		b.data = nil
	}
}

func setData(out *mlx.Array, data any) {
	b := &cpuBuf{data: data}
	b.refs.Store(1)
	out.SetStorage(b)
}

// allocData makes a zeroed slice of n elements of dtype dt's storage type.
func allocData(dt mlx.DType, n int) any {
	switch dt {
	case mlx.Float32:
		return make([]float32, n)
	case mlx.Float16, mlx.BFloat16:
		return make([]uint16, n)
	case mlx.Int32:
		return make([]int32, n)
	case mlx.Uint32:
		return make([]uint32, n)
	default:
		return make([]uint8, n)
	}
}

func (cpuBackend) Free(a *mlx.Array) {
	switch s := a.Storage().(type) {
	case *cpuBuf:
		releaseBuf(s)
	case *cpuView:
		releaseBuf(s.buf)
	}
}

func (cpuBackend) Eval([]*mlx.Array) error { return nil }

func (cpuBackend) View(x, out *mlx.Array) {
	b := cb(x)
	b.refs.Add(1)
	out.SetStorage(b)
}

func (cpuBackend) FromHost(out *mlx.Array, src any) {
	n := out.Size()
	var d any
	switch s := src.(type) {
	case []float32:
		d = append(make([]float32, 0, n), s...)
	case []uint16:
		d = append(make([]uint16, 0, n), s...)
	case []int32:
		d = append(make([]int32, 0, n), s...)
	case []uint32:
		d = append(make([]uint32, 0, n), s...)
	case []uint8:
		d = append(make([]uint8, 0, n), s...)
	case []bool:
		u := make([]uint8, n)
		for i, v := range s {
			if v {
				u[i] = 1
			}
		}
		d = u
	default:
		panic(fmt.Sprintf("mlx: cpu FromHost: unsupported %T", src))
	}
	setData(out, d)
}

func (cpuBackend) FromBytes(out *mlx.Array, raw []byte) {
	n := out.Size()
	le := binary.LittleEndian
	switch out.DType() {
	case mlx.Float32:
		d := make([]float32, n)
		for i := range d {
			d[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		setData(out, d)
	case mlx.Float16, mlx.BFloat16:
		d := make([]uint16, n)
		for i := range d {
			d[i] = le.Uint16(raw[2*i:])
		}
		setData(out, d)
	case mlx.Int32:
		d := make([]int32, n)
		for i := range d {
			d[i] = int32(le.Uint32(raw[4*i:]))
		}
		setData(out, d)
	case mlx.Uint32:
		d := make([]uint32, n)
		for i := range d {
			d[i] = le.Uint32(raw[4*i:])
		}
		setData(out, d)
	case mlx.Bool:
		d := make([]uint8, n)
		for i := range d {
			if raw[i] != 0 {
				d[i] = 1
			}
		}
		setData(out, d)
	default:
		setData(out, append([]uint8(nil), raw[:n]...))
	}
}

func (cpuBackend) CopyToHost(a *mlx.Array, dst any) {
	switch d := dst.(type) {
	case []bool:
		for i, v := range cb(a).data.([]uint8) {
			d[i] = v != 0
		}
	case []float32:
		copy(d, cb(a).data.([]float32))
	case []uint16:
		copy(d, cb(a).data.([]uint16))
	case []int32:
		copy(d, cb(a).data.([]int32))
	case []uint32:
		copy(d, cb(a).data.([]uint32))
	case []uint8:
		copy(d, cb(a).data.([]uint8))
	default:
		panic(fmt.Sprintf("mlx: cpu CopyToHost: unsupported %T", dst))
	}
}

func (cpuBackend) Full(out *mlx.Array, v float64) {
	n := out.Size()
	d := allocData(out.DType(), n)
	switch s := d.(type) {
	case []float32:
		fillT(s, float32(v))
	case []uint16:
		if out.DType() == mlx.Float16 {
			fillT(s, mlx.F32ToF16(float32(v)))
		} else {
			fillT(s, mlx.F32ToBF16(float32(v)))
		}
	case []int32:
		fillT(s, int32(v))
	case []uint32:
		fillT(s, uint32(v))
	case []uint8:
		if out.DType() == mlx.Bool {
			if v != 0 {
				fillT(s, 1)
			}
		} else {
			fillT(s, uint8(v))
		}
	}
	setData(out, d)
}

func fillT[T any](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}

func (cpuBackend) Arange(out *mlx.Array, start, step float64) {
	n := out.Size()
	f := make([]float64, n)
	for i := range f {
		f[i] = start + float64(i)*step
	}
	setData(out, fromF64(out.DType(), f))
}

// fromF64 converts host float64 values into dtype dt's storage.
func fromF64(dt mlx.DType, f []float64) any {
	d := allocData(dt, len(f))
	switch s := d.(type) {
	case []float32:
		for i, v := range f {
			s[i] = float32(v)
		}
	case []uint16:
		for i, v := range f {
			if dt == mlx.Float16 {
				s[i] = mlx.F32ToF16(float32(v))
			} else {
				s[i] = mlx.F32ToBF16(float32(v))
			}
		}
	case []int32:
		for i, v := range f {
			s[i] = int32(v)
		}
	case []uint32:
		for i, v := range f {
			s[i] = uint32(v)
		}
	case []uint8:
		for i, v := range f {
			if dt == mlx.Bool {
				if v != 0 {
					s[i] = 1
				}
			} else {
				s[i] = uint8(v)
			}
		}
	}
	return d
}

// f32Of returns x's elements as float32. For float32 arrays it is the
// storage itself (callers must not write to it); other dtypes are converted
// into a fresh slice.
func f32Of(x *mlx.Array) []float32 {
	// A float32 window (a split part, a head view at decode) is read in
	// place without turning the view into a buffer of its own, which cb
	// does at the cost of two allocations.
	if v, ok := x.Storage().(*cpuView); ok && x.DType() == mlx.Float32 {
		if n, inPlace := window(x, v); inPlace {
			return v.buf.data.([]float32)[v.off : v.off+n : v.off+n]
		}
	}
	switch s := cb(x).data.(type) {
	case []float32:
		return s
	case []uint16:
		r := make([]float32, len(s))
		if x.DType() == mlx.Float16 {
			mlx.F16sToF32(r, s)
		} else {
			mlx.BF16sToF32(r, s)
		}
		return r
	case []int32:
		r := make([]float32, len(s))
		for i, v := range s {
			r[i] = float32(v)
		}
		return r
	case []uint32:
		r := make([]float32, len(s))
		for i, v := range s {
			r[i] = float32(v)
		}
		return r
	case []uint8:
		r := make([]float32, len(s))
		for i, v := range s {
			r[i] = float32(v)
		}
		return r
	}
	panic("mlx: cpu: bad storage")
}

// setF32 stores float32 results into out, converting to out's float dtype.
// For float32 outputs the slice is adopted without copying.
func setF32(out *mlx.Array, r []float32) {
	switch out.DType() {
	case mlx.Float32:
		setData(out, r)
	case mlx.Float16:
		d := make([]uint16, len(r))
		mlx.F32sToF16(d, r)
		setData(out, d)
	case mlx.BFloat16:
		d := make([]uint16, len(r))
		mlx.F32sToBF16(d, r)
		setData(out, d)
	default:
		// integer outputs of float computations truncate toward zero, like
		// a C cast (MLX's astype does the same).
		f := make([]float64, len(r))
		for i, v := range r {
			f[i] = float64(v)
		}
		setData(out, fromF64(out.DType(), f))
	}
}

func (cpuBackend) AsType(x, out *mlx.Array) {
	if x.DType() == out.DType() {
		setData(out, cloneData(cb(x).data))
		return
	}
	src := cb(x).data
	switch {
	case out.DType() == mlx.Bool:
		d := make([]uint8, x.Size())
		switch s := src.(type) {
		case []float32:
			for i, v := range s {
				if v != 0 {
					d[i] = 1
				}
			}
		case []uint16:
			for i, v := range s {
				if v&0x7fff != 0 {
					d[i] = 1
				}
			}
		case []int32:
			for i, v := range s {
				if v != 0 {
					d[i] = 1
				}
			}
		case []uint32:
			for i, v := range s {
				if v != 0 {
					d[i] = 1
				}
			}
		case []uint8:
			for i, v := range s {
				if v != 0 {
					d[i] = 1
				}
			}
		}
		setData(out, d)
	case out.DType().IsFloat():
		// Integers up to 2^24 are exact in float32; larger int32/uint32
		// values round once more when narrowing to f16/bf16, as in MLX's
		// own float path.
		setF32(out, cloneIfSame(x, f32Of(x)))
	default:
		// to an integer type: go through float64, which is exact for every
		// source value; casts truncate toward zero and wrap like C.
		setData(out, intFrom(x, out.DType()))
	}
}

func cloneIfSame(x *mlx.Array, r []float32) []float32 {
	if x.DType() == mlx.Float32 {
		return append([]float32(nil), r...)
	}
	return r
}

func intFrom(x *mlx.Array, dt mlx.DType) any {
	n := x.Size()
	conv := func(get func(i int) float64) any {
		switch dt {
		case mlx.Int32:
			d := make([]int32, n)
			for i := range d {
				d[i] = int32(int64(get(i)))
			}
			return d
		case mlx.Uint32:
			d := make([]uint32, n)
			for i := range d {
				d[i] = uint32(int64(get(i)))
			}
			return d
		default:
			d := make([]uint8, n)
			for i := range d {
				d[i] = uint8(int64(get(i)))
			}
			return d
		}
	}
	switch s := cb(x).data.(type) {
	case []int32:
		return conv(func(i int) float64 { return float64(s[i]) })
	case []uint32:
		return conv(func(i int) float64 { return float64(s[i]) })
	case []uint8:
		return conv(func(i int) float64 { return float64(s[i]) })
	}
	f := f32Of(x)
	return conv(func(i int) float64 {
		v := float64(f[i])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return v
	})
}

func cloneData(d any) any {
	switch s := d.(type) {
	case []float32:
		return append([]float32(nil), s...)
	case []uint16:
		return append([]uint16(nil), s...)
	case []int32:
		return append([]int32(nil), s...)
	case []uint32:
		return append([]uint32(nil), s...)
	case []uint8:
		return append([]uint8(nil), s...)
	}
	panic("mlx: cpu: bad storage")
}

// rowMajor reports whether strides lay shape out contiguously in row-major
// order (axes of size 1 may have any stride).
func rowMajor(shape, strides []int) bool {
	want := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] == 1 {
			continue
		}
		if strides[i] != want {
			return false
		}
		want *= shape[i]
	}
	return true
}

// sliceData is d[lo:hi] for any storage slice type.
func sliceData(d any, lo, hi int) any {
	switch s := d.(type) {
	case []float32:
		return s[lo:hi:hi]
	case []uint16:
		return s[lo:hi:hi]
	case []int32:
		return s[lo:hi:hi]
	case []uint32:
		return s[lo:hi:hi]
	case []uint8:
		return s[lo:hi:hi]
	}
	panic("mlx: cpu: unknown storage type")
}

func init() {
	mlx.RegisterBackend("cpu", "CPU", func() (mlx.Backend, error) { return cpuBackend{}, nil })
}
