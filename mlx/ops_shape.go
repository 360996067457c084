package mlx

import (
	"fmt"
	"slices"
)

// view makes out share x's data under a new shape.
func view(op string, x *Array, shape []int) *Array {
	be := backendOf(op, x)
	if shapeSize(shape) != x.Size() {
		panic(fmt.Sprintf("mlx.%s: cannot view shape %v as %v", op, slices.Clone(x.shape), slices.Clone(shape)))
	}
	out := newArray(be, x.dtype, shape)
	be.View(x, out)
	return out
}

// Reshape returns x with a new shape; one dimension may be -1 (inferred).
// The data is shared, not copied.
func Reshape(x *Array, shape ...int) *Array {
	x.check("Reshape")
	// A copy to fill in the -1: on the stack for up to four axes, as are
	// the callers' variadic shapes (the panics below copy what they print).
	var buf [4]int
	s := append(buf[:0], shape...)
	infer := -1
	known := 1
	for i, d := range s {
		if d == -1 {
			if infer >= 0 {
				panic(fmt.Sprintf("mlx.Reshape: more than one -1 in %v", slices.Clone(shape)))
			}
			infer = i
		} else {
			known *= d
		}
	}
	if infer >= 0 {
		if known == 0 || x.Size()%known != 0 {
			panic(fmt.Sprintf("mlx.Reshape: cannot reshape %v to %v", slices.Clone(x.shape), slices.Clone(shape)))
		}
		s[infer] = x.Size() / known
	}
	return view("Reshape", x, s)
}

// Flatten merges axes start..end (inclusive; negative counts from the end).
func Flatten(x *Array, start, end int) *Array {
	x.check("Flatten")
	nd := len(x.shape)
	if nd == 0 {
		return Reshape(x, 1)
	}
	start, end = normAxis("Flatten", start, nd), normAxis("Flatten", end, nd)
	s := append([]int(nil), x.shape[:start]...)
	s = append(s, shapeSize(x.shape[start:end+1]))
	s = append(s, x.shape[end+1:]...)
	return view("Flatten", x, s)
}

// ExpandDims inserts size-1 axes at the given positions of the result.
func ExpandDims(x *Array, axes ...int) *Array {
	x.check("ExpandDims")
	nd := len(x.shape) + len(axes)
	ins := make([]bool, nd)
	for _, a := range axes {
		a = normAxis("ExpandDims", a, nd)
		if ins[a] {
			panic("mlx.ExpandDims: repeated axis")
		}
		ins[a] = true
	}
	s := make([]int, 0, nd)
	j := 0
	for i := 0; i < nd; i++ {
		if ins[i] {
			s = append(s, 1)
		} else {
			s = append(s, x.shape[j])
			j++
		}
	}
	return view("ExpandDims", x, s)
}

// Squeeze removes the given size-1 axes, or all size-1 axes when none given.
func Squeeze(x *Array, axes ...int) *Array {
	x.check("Squeeze")
	drop := make([]bool, len(x.shape))
	if len(axes) == 0 {
		for i, d := range x.shape {
			drop[i] = d == 1
		}
	}
	for _, a := range axes {
		a = normAxis("Squeeze", a, len(x.shape))
		if x.shape[a] != 1 {
			panic(fmt.Sprintf("mlx.Squeeze: axis %d of %v is not 1", a, x.shape))
		}
		drop[a] = true
	}
	var s []int
	for i, d := range x.shape {
		if !drop[i] {
			s = append(s, d)
		}
	}
	return view("Squeeze", x, s)
}

// Transpose permutes axes (reverses them when perm is empty). It copies.
func Transpose(x *Array, perm ...int) *Array {
	be := backendOf("Transpose", x)
	nd := len(x.shape)
	if len(perm) == 0 {
		perm = make([]int, nd)
		for i := range perm {
			perm[i] = nd - 1 - i
		}
	}
	if len(perm) != nd {
		panic(fmt.Sprintf("mlx.Transpose: perm %v for shape %v", slices.Clone(perm), slices.Clone(x.shape)))
	}
	// None of these escapes (the panics print copies, the backend gets
	// one), so for the few axes of a model's arrays they live on the stack.
	p, s, seen := make([]int, nd), make([]int, nd), make([]bool, nd)
	for i, a := range perm {
		a = normAxis("Transpose", a, nd)
		if seen[a] {
			panic(fmt.Sprintf("mlx.Transpose: repeated axis in %v", slices.Clone(perm)))
		}
		seen[a] = true
		p[i] = a
		s[i] = x.shape[a]
	}
	// When the axes longer than 1 keep their order, the permutation only
	// moves unit axes and the data is already laid out as the result
	// ([B, 1, H, D] -> [B, H, 1, D] when splitting heads of one decode
	// token): share it instead of copying.
	inOrder, last := true, -1
	for _, a := range p {
		if x.shape[a] == 1 {
			continue
		}
		inOrder = inOrder && a > last
		last = a
	}
	if inOrder {
		return view("Transpose", x, s)
	}
	out := newArray(be, x.dtype, s)
	be.Transpose(x, slices.Clone(p), out) // a copy: through the interface p would escape
	return out
}

// SwapAxes exchanges two axes.
func SwapAxes(x *Array, a, b int) *Array {
	x.check("SwapAxes")
	nd := len(x.shape)
	a, b = normAxis("SwapAxes", a, nd), normAxis("SwapAxes", b, nd)
	perm := make([]int, nd)
	for i := range perm {
		perm[i] = i
	}
	perm[a], perm[b] = b, a
	return Transpose(x, perm...)
}

// MoveAxis moves axis src to position dst.
func MoveAxis(x *Array, src, dst int) *Array {
	x.check("MoveAxis")
	nd := len(x.shape)
	src, dst = normAxis("MoveAxis", src, nd), normAxis("MoveAxis", dst, nd)
	var perm []int
	for i := 0; i < nd; i++ {
		if i != src {
			perm = append(perm, i)
		}
	}
	perm = slices.Insert(perm, dst, src)
	return Transpose(x, perm...)
}

// BroadcastTo materialises x broadcast to shape.
func BroadcastTo(x *Array, shape ...int) *Array {
	be := backendOf("BroadcastTo", x)
	s := mustBroadcast("BroadcastTo", x.shape, shape)
	if !slices.Equal(s, shape) {
		panic(fmt.Sprintf("mlx.BroadcastTo: cannot broadcast %v to %v", x.shape, shape))
	}
	if slices.Equal(x.shape, shape) {
		return view("BroadcastTo", x, shape)
	}
	out := newArray(be, x.dtype, shape)
	be.BroadcastTo(x, out)
	return out
}

// Repeat repeats each element of x n times along axis (numpy.repeat),
// e.g. to expand grouped KV heads for code that needs Hq == Hkv.
func Repeat(x *Array, n, axis int) *Array {
	x.check("Repeat")
	if n < 0 {
		panic("mlx.Repeat: negative count")
	}
	axis = normAxis("Repeat", axis, len(x.shape))
	e := ExpandDims(x, axis+1)
	s := e.Shape()
	s[axis+1] = n
	b := BroadcastTo(e, s...)
	out := Flatten(b, axis, axis+1)
	Free(e, b)
	return out
}

// normSlice resolves Python-style start/stop/step on a dim of size n and
// returns the start index and length of the result.
func normSlice(start, stop, step, n int) (int, int) {
	if step == 0 {
		panic("mlx.Slice: zero stride")
	}
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	if step > 0 {
		start = min(max(start, 0), n)
		stop = min(max(stop, 0), n)
		if stop <= start {
			return start, 0
		}
		return start, (stop - start + step - 1) / step
	}
	start = min(max(start, -1), n-1)
	stop = min(max(stop, -1), n-1)
	if stop >= start {
		return start, 0
	}
	return start, (start - stop - step - 1) / -step
}

// End is a stop value meaning "to the end of the axis" for Slice.
const End = int(^uint(0) >> 1)

// Slice takes x[start[i]:stop[i]:strides[i]] on each leading axis, with
// Python semantics (negative indices count from the end, out-of-range
// values clamp, negative strides walk backwards). start and stop may be
// shorter than x's rank (the remaining axes are kept whole); strides may be
// nil (all 1). Use End as stop for "to the end".
func Slice(x *Array, start, stop, strides []int) *Array {
	be := backendOf("Slice", x)
	st, sh, step := sliceSpec("Slice", x.shape, start, stop, strides)
	out := newArray(be, x.dtype, sh)
	be.Slice(x, st, step, out)
	return out
}

func sliceSpec(op string, shape, start, stop, strides []int) (st, sh, step []int) {
	nd := len(shape)
	if len(start) > nd || len(stop) != len(start) || (strides != nil && len(strides) != len(start)) {
		// Copies, so that the slices themselves do not escape: callers'
		// literals (the KV cache's, every token) can stay on the stack.
		panic(fmt.Sprintf("mlx.%s: start %v stop %v strides %v for shape %v", op,
			slices.Clone(start), slices.Clone(stop), slices.Clone(strides), slices.Clone(shape)))
	}
	buf := make([]int, 3*nd) // one allocation: slicing runs per head per token
	st, sh, step = buf[:nd:nd], buf[nd:2*nd:2*nd], buf[2*nd:]
	for i := 0; i < nd; i++ {
		step[i] = 1
		sh[i] = shape[i]
		if i >= len(start) {
			continue
		}
		if strides != nil {
			step[i] = strides[i]
		}
		st[i], sh[i] = normSlice(start[i], stop[i], step[i], shape[i])
	}
	return
}

// SliceAxis is x[..., start:stop, ...] on one axis.
func SliceAxis(x *Array, axis, start, stop int) *Array {
	x.check("SliceAxis")
	axis = normAxis("SliceAxis", axis, len(x.shape))
	var arr [8]int // on the stack for the first four axes
	buf := arr[:]
	if 2*(axis+1) > len(arr) {
		buf = make([]int, 2*(axis+1))
	}
	buf = buf[:2*(axis+1)]
	st, sp := buf[:axis+1:axis+1], buf[axis+1:]
	for i := 0; i < axis; i++ {
		sp[i] = End
	}
	st[axis], sp[axis] = start, stop
	return Slice(x, st, sp, nil)
}

// SliceUpdate returns a copy of dst with dst[start:stop:strides] replaced by
// upd (broadcast to the slice's shape). For a KV cache prefer SliceAssign,
// which writes into dst without copying all of it.
func SliceUpdate(dst, upd *Array, start, stop, strides []int) *Array {
	be := backendOf("SliceUpdate", dst, upd)
	st, sh, step := sliceSpec("SliceUpdate", dst.shape, start, stop, strides)
	u := broadcastFor("SliceUpdate", upd, sh, dst.dtype)
	out := newArray(be, dst.dtype, dst.shape)
	be.SliceUpdate(dst, u, st, step, out)
	if u != upd {
		u.Free()
	}
	return out
}

// SliceAssign is dst = SliceUpdate(dst, upd, ...) without the copy: dst's
// own storage is updated (MLX achieves the same by donating dst's buffer).
// Views made earlier from dst (Reshape and friends) keep the old contents:
// when such a view exists the storage is copied first, so no other array
// ever changes under its owner's feet. This is the KV-cache write.
func SliceAssign(dst, upd *Array, start, stop, strides []int) {
	be := backendOf("SliceAssign", dst, upd)
	st, sh, step := sliceSpec("SliceAssign", dst.shape, start, stop, strides)
	u := broadcastFor("SliceAssign", upd, sh, dst.dtype)
	be.SliceAssign(dst, u, st, step)
	if u != upd {
		u.Free()
	}
}

// broadcastFor casts and broadcasts x to shape unless it already matches.
func broadcastFor(op string, x *Array, shape []int, dt DType) *Array {
	c := castTo(x, dt)
	if slices.Equal(c.shape, shape) {
		return c
	}
	if b, err := BroadcastShapes(c.shape, shape); err != nil || !slices.Equal(b, shape) {
		panic(fmt.Sprintf("mlx.%s: update of shape %v does not fit slice %v", op, slices.Clone(x.shape), slices.Clone(shape)))
	}
	r := BroadcastTo(c, shape...)
	if c != x {
		c.Free()
	}
	return r
}

// Concatenate joins arrays along axis; dtypes promote.
func Concatenate(xs []*Array, axis int) *Array {
	if len(xs) == 0 {
		panic("mlx.Concatenate: no arrays")
	}
	be := backendOf("Concatenate", xs...)
	nd := len(xs[0].shape)
	axis = normAxis("Concatenate", axis, nd)
	shape := append([]int(nil), xs[0].shape...)
	dt := xs[0].dtype
	for _, x := range xs[1:] {
		if len(x.shape) != nd {
			panic(fmt.Sprintf("mlx.Concatenate: rank mismatch %v vs %v", xs[0].shape, x.shape))
		}
		for i := range shape {
			if i != axis && x.shape[i] != shape[i] {
				panic(fmt.Sprintf("mlx.Concatenate: shapes %v and %v differ off axis %d", xs[0].shape, x.shape, axis))
			}
		}
		shape[axis] += x.shape[axis]
		dt = PromoteTypes(dt, x.dtype)
	}
	cs := make([]*Array, len(xs))
	for i, x := range xs {
		cs[i] = castTo(x, dt)
	}
	out := newArray(be, dt, shape)
	be.Concat(cs, axis, out)
	for i := range cs {
		if cs[i] != xs[i] {
			cs[i].Free()
		}
	}
	return out
}

// Stack joins same-shape arrays along a new axis.
func Stack(xs []*Array, axis int) *Array {
	if len(xs) == 0 {
		panic("mlx.Stack: no arrays")
	}
	ex := make([]*Array, len(xs))
	axis = normAxis("Stack", axis, len(xs[0].Shape())+1)
	for i, x := range xs {
		ex[i] = ExpandDims(x, axis)
	}
	out := Concatenate(ex, axis)
	Free(ex...)
	return out
}

// Split cuts x along axis at the given indices (like numpy.split with a list).
func Split(x *Array, indices []int, axis int) []*Array {
	x.check("Split")
	axis = normAxis("Split", axis, len(x.shape))
	out := make([]*Array, 0, len(indices)+1)
	prev := 0
	for k := 0; k <= len(indices); k++ {
		i := x.shape[axis]
		if k < len(indices) {
			i = indices[k]
		}
		out = append(out, SliceAxis(x, axis, prev, i))
		prev = i
	}
	return out
}

// SplitEqual cuts x along axis into n equal parts.
func SplitEqual(x *Array, n, axis int) []*Array {
	x.check("SplitEqual")
	d := x.shape[normAxis("SplitEqual", axis, len(x.shape))]
	if n <= 0 || d%n != 0 {
		panic(fmt.Sprintf("mlx.SplitEqual: axis of size %d into %d parts", d, n))
	}
	idx := make([]int, n-1)
	for i := range idx {
		idx[i] = (i + 1) * d / n
	}
	return Split(x, idx, axis)
}

// Pad pads each axis i with low[i] before and high[i] after, filled with
// value. low/high may be shorter than the rank (leading axes).
func Pad(x *Array, low, high []int, value float64) *Array {
	be := backendOf("Pad", x)
	nd := len(x.shape)
	if len(low) > nd || len(high) != len(low) {
		panic(fmt.Sprintf("mlx.Pad: low %v high %v for shape %v", low, high, x.shape))
	}
	shape := append([]int(nil), x.shape...)
	lo := make([]int, nd)
	for i := range low {
		if low[i] < 0 || high[i] < 0 {
			panic("mlx.Pad: negative padding")
		}
		lo[i] = low[i]
		shape[i] += low[i] + high[i]
	}
	out := newArray(be, x.dtype, shape)
	be.Pad(x, lo, value, out)
	return out
}

// Take gathers entries of x along axis at the integer indices idx; the
// result's shape is x.shape[:axis] + idx.shape + x.shape[axis+1:]. Negative
// indices count from the end. This is the embedding lookup.
func Take(x, idx *Array, axis int) *Array {
	be := backendOf("Take", x, idx)
	if idx.dtype.IsFloat() || idx.dtype == Bool {
		panic("mlx.Take: indices must be integers, got " + idx.dtype.String())
	}
	axis = normAxis("Take", axis, len(x.shape))
	shape := append(append(append([]int(nil), x.shape[:axis]...), idx.shape...), x.shape[axis+1:]...)
	out := newArray(be, x.dtype, shape)
	be.Take(x, idx, axis, out)
	return out
}

// TakeAlongAxis picks x's entries along axis at idx, which broadcasts with x
// on the other axes (numpy.take_along_axis).
func TakeAlongAxis(x, idx *Array, axis int) *Array {
	be := backendOf("TakeAlongAxis", x, idx)
	if len(idx.shape) != len(x.shape) {
		panic(fmt.Sprintf("mlx.TakeAlongAxis: indices %v and array %v differ in rank", idx.shape, x.shape))
	}
	axis = normAxis("TakeAlongAxis", axis, len(x.shape))
	xs := append([]int(nil), x.shape...)
	xs[axis] = 1
	is := append([]int(nil), idx.shape...)
	is[axis] = 1
	b := mustBroadcast("TakeAlongAxis", xs, is)
	b[axis] = idx.shape[axis]
	bi := idx
	if !slices.Equal(idx.shape, b) {
		bi = BroadcastTo(idx, b...)
		defer bi.Free()
	}
	out := newArray(be, x.dtype, b)
	be.TakeAlongAxis(x, bi, axis, out)
	return out
}
