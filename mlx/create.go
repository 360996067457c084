package mlx

import (
	"fmt"
	"math"
)

// Element is the set of Go element types arrays can be built from.
// float64 data is narrowed to float32; uint16 is taken as raw f16 bits.
type Element interface {
	float32 | float64 | int32 | uint32 | uint8 | bool | int | uint16
}

// FromSlice creates an array holding a copy of data with the given shape
// (no shape means 1-D). The dtype follows the Go type: float32/float64 →
// Float32, int32/int → Int32, uint32 → Uint32, uint8 → Uint8, bool → Bool,
// uint16 → Float16 (raw bits; use FromBits for bfloat16). It panics when
// len(data) does not match the shape.
func FromSlice[T Element](data []T, shape ...int) *Array {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	if shapeSize(shape) != len(data) {
		panic(fmt.Sprintf("mlx.FromSlice: %d elements do not fit shape %v", len(data), shape))
	}
	var src any
	var dt DType
	switch d := any(data).(type) {
	case []float32:
		src, dt = d, Float32
	case []float64:
		f := make([]float32, len(d))
		for i, v := range d {
			f[i] = float32(v)
		}
		src, dt = f, Float32
	case []int32:
		src, dt = d, Int32
	case []int:
		f := make([]int32, len(d))
		for i, v := range d {
			f[i] = int32(v)
		}
		src, dt = f, Int32
	case []uint32:
		src, dt = d, Uint32
	case []uint8:
		src, dt = d, Uint8
	case []bool:
		src, dt = d, Bool
	case []uint16:
		src, dt = d, Float16
	}
	b := DefaultBackend()
	out := newArray(b, dt, shape)
	b.FromHost(out, src)
	return out
}

// FromBits creates a Float16 or BFloat16 array from raw 16-bit patterns.
func FromBits(bits []uint16, dt DType, shape ...int) *Array {
	if dt != Float16 && dt != BFloat16 {
		panic("mlx.FromBits: dtype must be float16 or bfloat16, got " + dt.String())
	}
	if len(shape) == 0 {
		shape = []int{len(bits)}
	}
	if shapeSize(shape) != len(bits) {
		panic(fmt.Sprintf("mlx.FromBits: %d elements do not fit shape %v", len(bits), shape))
	}
	b := DefaultBackend()
	out := newArray(b, dt, shape)
	b.FromHost(out, bits)
	return out
}

// FromBytes creates an array from little-endian raw bytes (the safetensors
// layout). Unlike the op functions it returns an error, because its input
// usually comes from a file.
func FromBytes(raw []byte, dt DType, shape ...int) (*Array, error) {
	n := shapeSize(shape)
	if len(raw) != n*dt.Size() {
		return nil, fmt.Errorf("mlx.FromBytes: %d bytes for %v %v (want %d)", len(raw), dt, shape, n*dt.Size())
	}
	b := DefaultBackend()
	out := newArray(b, dt, shape)
	b.FromBytes(out, raw)
	return out, nil
}

// ResidentFromBytes is FromBytes for an array that lives as long as a
// model (its weights): the backend copies raw once, straight into memory
// off the garbage-collected heap where it has such memory
// (ResidentLoader), instead of onto the heap and then again for Resident.
// A multi-GB checkpoint then never passes through the heap, whose pages
// Go returns to the system only slowly, and peak memory stays at one copy
// of the weights. Otherwise it is FromBytes followed by Resident.
func ResidentFromBytes(raw []byte, dt DType, shape ...int) (*Array, error) {
	n := shapeSize(shape)
	if len(raw) != n*dt.Size() {
		return nil, fmt.Errorf("mlx.ResidentFromBytes: %d bytes for %v %v (want %d)", len(raw), dt, shape, n*dt.Size())
	}
	b := DefaultBackend()
	out := newArray(b, dt, shape)
	if l, ok := b.(ResidentLoader); ok && l.FromBytesResident(out, raw) {
		return out, nil
	}
	b.FromBytes(out, raw)
	return Resident(out), nil
}

// Scalar creates a 0-d array of dtype dt.
func Scalar(v float64, dt DType) *Array { return Full(nil, v, dt) }

// Full creates an array of shape filled with v (converted to dt).
func Full(shape []int, v float64, dt DType) *Array {
	b := DefaultBackend()
	out := newArray(b, dt, shape)
	b.Full(out, v)
	return out
}

// Zeros creates an array of zeros.
func Zeros(shape []int, dt DType) *Array { return Full(shape, 0, dt) }

// Ones creates an array of ones.
func Ones(shape []int, dt DType) *Array { return Full(shape, 1, dt) }

// ZerosLike is Zeros with a's shape and dtype.
func ZerosLike(a *Array) *Array { return Full(a.Shape(), 0, a.dtype) }

// OnesLike is Ones with a's shape and dtype.
func OnesLike(a *Array) *Array { return Full(a.Shape(), 1, a.dtype) }

// Arange returns start, start+step, ... below stop (above, for a negative
// step), like numpy.arange.
func Arange(start, stop, step float64, dt DType) *Array {
	if step == 0 {
		panic("mlx.Arange: step is zero")
	}
	n := int(math.Ceil((stop - start) / step))
	if n < 0 {
		n = 0
	}
	b := DefaultBackend()
	out := newArray(b, dt, []int{n})
	b.Arange(out, start, step)
	return out
}

// Float32s returns the elements as float32 (converting from any dtype),
// evaluating first.
func (a *Array) Float32s() []float32 { return a.Float32sInto(nil) }

// Float32sInto is Float32s writing into dst's storage when it has room
// (dst's contents are replaced, not appended to). A decode loop that reads
// its logits every token reuses one buffer instead of faulting in a fresh
// megabyte each time.
func (a *Array) Float32sInto(dst []float32) []float32 {
	a.check("Float32s")
	a.mustEval()
	n := a.Size()
	switch a.dtype {
	case Float32:
		var r []float32
		if cap(dst) >= n {
			r = dst[:n]
		} else {
			r = make([]float32, n)
		}
		a.backend.CopyToHost(a, r)
		return r
	case Float16, BFloat16:
		u := make([]uint16, n)
		a.backend.CopyToHost(a, u)
		r := make([]float32, n)
		if a.dtype == Float16 {
			F16sToF32(r, u)
		} else {
			BF16sToF32(r, u)
		}
		return r
	}
	f := a.Float64s()
	r := make([]float32, n)
	for i, v := range f {
		r[i] = float32(v)
	}
	return r
}

// Float64s returns the elements widened to float64 (exact for every dtype).
func (a *Array) Float64s() []float64 {
	a.check("Float64s")
	a.mustEval()
	n := a.Size()
	r := make([]float64, n)
	switch a.dtype {
	case Float32, Float16, BFloat16:
		for i, v := range a.Float32s() {
			r[i] = float64(v)
		}
	case Int32:
		s := make([]int32, n)
		a.backend.CopyToHost(a, s)
		for i, v := range s {
			r[i] = float64(v)
		}
	case Uint32:
		s := make([]uint32, n)
		a.backend.CopyToHost(a, s)
		for i, v := range s {
			r[i] = float64(v)
		}
	case Uint8:
		s := make([]uint8, n)
		a.backend.CopyToHost(a, s)
		for i, v := range s {
			r[i] = float64(v)
		}
	case Bool:
		s := make([]bool, n)
		a.backend.CopyToHost(a, s)
		for i, v := range s {
			if v {
				r[i] = 1
			}
		}
	}
	return r
}

// Int32s returns the elements as int32 (floats truncate toward zero).
func (a *Array) Int32s() []int32 {
	a.check("Int32s")
	a.mustEval()
	if a.dtype == Int32 {
		r := make([]int32, a.Size())
		a.backend.CopyToHost(a, r)
		return r
	}
	f := a.Float64s()
	r := make([]int32, len(f))
	for i, v := range f {
		r[i] = int32(int64(v))
	}
	return r
}

// Ints is Int32s widened to int, handy for indices and token ids.
func (a *Array) Ints() []int {
	s := a.Int32s()
	r := make([]int, len(s))
	for i, v := range s {
		r[i] = int(v)
	}
	return r
}

// Uint32s returns the elements of a Uint32 array.
func (a *Array) Uint32s() []uint32 {
	a.check("Uint32s")
	a.mustEval()
	if a.dtype != Uint32 {
		panic("mlx.Uint32s: array is " + a.dtype.String())
	}
	r := make([]uint32, a.Size())
	a.backend.CopyToHost(a, r)
	return r
}

// Uint8s returns the elements of a Uint8 array.
func (a *Array) Uint8s() []uint8 {
	a.check("Uint8s")
	a.mustEval()
	if a.dtype != Uint8 {
		panic("mlx.Uint8s: array is " + a.dtype.String())
	}
	r := make([]uint8, a.Size())
	a.backend.CopyToHost(a, r)
	return r
}

// Bools returns the elements of a Bool array.
func (a *Array) Bools() []bool {
	a.check("Bools")
	a.mustEval()
	if a.dtype != Bool {
		panic("mlx.Bools: array is " + a.dtype.String())
	}
	r := make([]bool, a.Size())
	a.backend.CopyToHost(a, r)
	return r
}

// Bits returns the raw 16-bit patterns of a Float16 or BFloat16 array.
func (a *Array) Bits() []uint16 {
	a.check("Bits")
	a.mustEval()
	if a.dtype != Float16 && a.dtype != BFloat16 {
		panic("mlx.Bits: array is " + a.dtype.String())
	}
	r := make([]uint16, a.Size())
	a.backend.CopyToHost(a, r)
	return r
}

// Item returns the single element of a size-1 array as float64.
func (a *Array) Item() float64 {
	a.check("Item")
	if a.Size() != 1 {
		panic(fmt.Sprintf("mlx.Item: array has shape %v", a.shape))
	}
	return a.Float64s()[0]
}

func (a *Array) mustEval() {
	if err := a.backend.Eval([]*Array{a}); err != nil {
		panic("mlx: eval: " + err.Error())
	}
}
