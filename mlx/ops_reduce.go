package mlx

import (
	"fmt"
	"slices"
)

// ReduceOp names a reduction.
type ReduceOp uint8

const (
	ReduceSum ReduceOp = iota
	ReduceMax
	ReduceMin
	ReduceProd
	ReduceAll
	ReduceAny
	ReduceArgMax // ArgReduce only
	ReduceArgMin // ArgReduce only
)

// reduceAxes normalises axes (none = all), sorted and unique.
func reduceAxes(op string, x *Array, axes []int) []int {
	nd := len(x.shape)
	if len(axes) == 0 {
		r := make([]int, nd)
		for i := range r {
			r[i] = i
		}
		return r
	}
	r := make([]int, len(axes))
	for i, a := range axes {
		r[i] = normAxis(op, a, nd)
	}
	slices.Sort(r)
	if len(slices.Compact(slices.Clone(r))) != len(r) {
		panic(fmt.Sprintf("mlx.%s: repeated axis in %v", op, axes))
	}
	return r
}

func reducedShape(shape, axes []int, keep bool) []int {
	var s []int
	for i, d := range shape {
		if slices.Contains(axes, i) {
			if keep {
				s = append(s, 1)
			}
			continue
		}
		s = append(s, d)
	}
	return s
}

func reduce(op ReduceOp, name string, x *Array, keepDims bool, axes []int) *Array {
	be := backendOf(name, x)
	ax := reduceAxes(name, x, axes)
	dt := x.dtype
	switch op {
	case ReduceSum, ReduceProd:
		if dt == Bool || dt == Uint8 {
			dt = Int32 // as MLX: small ints accumulate into a wider type
		}
	case ReduceAll, ReduceAny:
		dt = Bool
	}
	out := newArray(be, dt, reducedShape(x.shape, ax, keepDims))
	be.Reduce(op, x, ax, out)
	return out
}

// Sum over axes (all axes when none are given). Floats accumulate in f32 or
// better and keep their dtype; bool and uint8 sum to int32.
func Sum(x *Array, keepDims bool, axes ...int) *Array {
	return reduce(ReduceSum, "Sum", x, keepDims, axes)
}

// Max is the maximum over axes (all when none); NaN propagates.
func Max(x *Array, keepDims bool, axes ...int) *Array {
	return reduce(ReduceMax, "Max", x, keepDims, axes)
}

// Min is the minimum over axes (all when none); NaN propagates.
func Min(x *Array, keepDims bool, axes ...int) *Array {
	return reduce(ReduceMin, "Min", x, keepDims, axes)
}

// Prod is the product over axes (all when none).
func Prod(x *Array, keepDims bool, axes ...int) *Array {
	return reduce(ReduceProd, "Prod", x, keepDims, axes)
}

// All reports whether every element over axes is non-zero.
func All(x *Array, keepDims bool, axes ...int) *Array {
	return reduce(ReduceAll, "All", x, keepDims, axes)
}

// Any reports whether some element over axes is non-zero.
func Any(x *Array, keepDims bool, axes ...int) *Array {
	return reduce(ReduceAny, "Any", x, keepDims, axes)
}

// Mean over axes; integer inputs give float32.
func Mean(x *Array, keepDims bool, axes ...int) *Array {
	x.check("Mean")
	ax := reduceAxes("Mean", x, axes)
	n := 1
	for _, a := range ax {
		n *= x.shape[a]
	}
	xf := x
	if !x.dtype.IsFloat() {
		xf = AsType(x, Float32)
		defer xf.Free()
	}
	s := reduce(ReduceSum, "Mean", xf, keepDims, ax)
	defer s.Free()
	return DivScalar(s, float64(n))
}

// Var is the variance over axes with ddof delta degrees of freedom.
func Var(x *Array, keepDims bool, ddof int, axes ...int) *Array {
	x.check("Var")
	ax := reduceAxes("Var", x, axes)
	n := 1
	for _, a := range ax {
		n *= x.shape[a]
	}
	m := Mean(x, true, ax...)
	d := Sub(x, m)
	sq := Square(d)
	s := Sum(sq, keepDims, ax...)
	out := DivScalar(s, float64(max(n-ddof, 0)))
	Free(m, d, sq, s)
	return out
}

func argReduce(op ReduceOp, name string, x *Array, axis int, keepDims bool) *Array {
	be := backendOf(name, x)
	axis = normAxis(name, axis, len(x.shape))
	if x.shape[axis] == 0 {
		panic("mlx." + name + ": empty axis")
	}
	out := newArray(be, Uint32, reducedShape(x.shape, []int{axis}, keepDims))
	be.ArgReduce(op, x, axis, out)
	return out
}

// ArgMax returns the (first) index of the maximum along axis, as uint32.
func ArgMax(x *Array, axis int, keepDims bool) *Array {
	return argReduce(ReduceArgMax, "ArgMax", x, axis, keepDims)
}

// ArgMin returns the (first) index of the minimum along axis, as uint32.
func ArgMin(x *Array, axis int, keepDims bool) *Array {
	return argReduce(ReduceArgMin, "ArgMin", x, axis, keepDims)
}

// Cumsum is the running sum along axis. reverse sums from the end;
// inclusive=false shifts by one (the first output is 0).
func Cumsum(x *Array, axis int, reverse, inclusive bool) *Array {
	be := backendOf("Cumsum", x)
	axis = normAxis("Cumsum", axis, len(x.shape))
	dt := x.dtype
	if dt == Bool || dt == Uint8 {
		dt = Int32
	}
	out := newArray(be, dt, x.shape)
	be.Cumsum(x, axis, reverse, inclusive, out)
	return out
}

// Sort sorts along axis, ascending (NaN last).
func Sort(x *Array, axis int) *Array {
	be := backendOf("Sort", x)
	axis = normAxis("Sort", axis, len(x.shape))
	out := newArray(be, x.dtype, x.shape)
	be.Sort(x, axis, false, out)
	return out
}

// ArgSort returns the uint32 indices that sort x along axis (stable).
func ArgSort(x *Array, axis int) *Array {
	be := backendOf("ArgSort", x)
	axis = normAxis("ArgSort", axis, len(x.shape))
	out := newArray(be, Uint32, x.shape)
	be.Sort(x, axis, true, out)
	return out
}

func topK(name string, x *Array, k, axis int, arg bool) *Array {
	be := backendOf(name, x)
	axis = normAxis(name, axis, len(x.shape))
	if k < 1 || k > x.shape[axis] {
		panic(fmt.Sprintf("mlx.%s: k=%d for axis of size %d", name, k, x.shape[axis]))
	}
	s := append([]int(nil), x.shape...)
	s[axis] = k
	dt := x.dtype
	if arg {
		dt = Uint32
	}
	out := newArray(be, dt, s)
	be.TopK(x, k, axis, arg, out)
	return out
}

// TopK returns the k largest values along axis in descending order (MLX
// leaves the order unspecified; sorted is what samplers want).
func TopK(x *Array, k, axis int) *Array { return topK("TopK", x, k, axis, false) }

// ArgTopK returns the uint32 indices of TopK's values, in the same order
// (ties favour the lower index).
func ArgTopK(x *Array, k, axis int) *Array { return topK("ArgTopK", x, k, axis, true) }
