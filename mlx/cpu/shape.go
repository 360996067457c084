package cpu

import (
	"fmt"

	"hark/mlx"
)

// gatherT fills dst contiguously from src walked by it (input 0), starting at
// element base of src.
func gatherT[T any](dst, src []T, it *bcast, base int) {
	st := it.istride[0]
	it.run(1, func(o int, offs []int, n int) {
		s := base + offs[0]
		if st == 1 {
			copy(dst[o:o+n], src[s:s+n])
			return
		}
		for i := 0; i < n; i++ {
			dst[o+i] = src[s+i*st]
		}
	})
}

// scatterT writes src (contiguous) into dst walked by it, from element base.
func scatterT[T any](dst, src []T, it *bcast, base int) {
	st := it.istride[0]
	it.run(1, func(o int, offs []int, n int) {
		d := base + offs[0]
		if st == 1 {
			copy(dst[d:d+n], src[o:o+n])
			return
		}
		for i := 0; i < n; i++ {
			dst[d+i*st] = src[o+i]
		}
	})
}

func gatherAny(dst, src any, it *bcast, base int) {
	switch d := dst.(type) {
	case []float32:
		gatherT(d, src.([]float32), it, base)
	case []uint16:
		gatherT(d, src.([]uint16), it, base)
	case []int32:
		gatherT(d, src.([]int32), it, base)
	case []uint32:
		gatherT(d, src.([]uint32), it, base)
	case []uint8:
		gatherT(d, src.([]uint8), it, base)
	default:
		panic(fmt.Sprintf("mlx: cpu: bad storage %T", dst))
	}
}

func scatterAny(dst, src any, it *bcast, base int) {
	switch d := dst.(type) {
	case []float32:
		scatterT(d, src.([]float32), it, base)
	case []uint16:
		scatterT(d, src.([]uint16), it, base)
	case []int32:
		scatterT(d, src.([]int32), it, base)
	case []uint32:
		scatterT(d, src.([]uint32), it, base)
	case []uint8:
		scatterT(d, src.([]uint8), it, base)
	default:
		panic(fmt.Sprintf("mlx: cpu: bad storage %T", dst))
	}
}

// layout returns x's storage with the element offset and strides of its
// data, without materialising views.
func layout(x *mlx.Array) (any, int, []int) {
	if v, ok := x.Storage().(*cpuView); ok {
		return v.buf.data, v.off, v.strides
	}
	return cb(x).data, 0, mlx.RowStrides(x.Dims())
}

func (cpuBackend) Transpose(x *mlx.Array, perm []int, out *mlx.Array) {
	src, off, xs := layout(x) // a view is permuted straight from its source
	st := make([]int, len(perm))
	for i, p := range perm {
		st[i] = xs[p]
	}
	if out.DType() == mlx.Float32 {
		// Prefill merges every layer's attention heads through here: a
		// pooled buffer is reused by the next layer instead of being
		// left for the garbage collector.
		d := newF32(out.Size())
		if out.Size() > 0 {
			gatherAny(d, src, makeStrided(out.Dims(), st), off)
		}
		setPooledF32(out, d)
		return
	}
	d := allocData(out.DType(), out.Size())
	if out.Size() > 0 {
		gatherAny(d, src, makeStrided(out.Dims(), st), off)
	}
	setData(out, d)
}

func (cpuBackend) BroadcastTo(x, out *mlx.Array) {
	d := allocData(out.DType(), out.Size())
	gatherAny(d, cb(x).data, makeBcast(out.Dims(), x.Dims()), 0)
	setData(out, d)
}

// Slice makes a strided view sharing x's storage; nothing is copied until
// an op needs the data contiguous.
func (cpuBackend) Slice(x *mlx.Array, start, step []int, out *mlx.Array) {
	if out.Size() == 0 {
		setData(out, allocData(out.DType(), 0))
		return
	}
	v := &cpuView{}
	if n := len(x.Dims()); n <= len(v.dims) {
		v.strides = v.dims[:n:n]
	} else {
		v.strides = make([]int, n)
	}
	var xs []int
	if s, ok := x.Storage().(*cpuView); ok {
		v.buf, v.off, xs = s.buf, s.off, s.strides
	} else {
		v.buf, xs = cb(x), mlx.RowStrides(x.Dims())
	}
	for i, st := range xs {
		v.strides[i] = st * step[i]
		v.off += start[i] * st
	}
	v.buf.refs.Add(1)
	out.SetStorage(v)
}

func (cpuBackend) SliceUpdate(dst, upd *mlx.Array, start, step []int, out *mlx.Array) {
	d := cloneData(cb(dst).data)
	sliceScatter(d, dst.Dims(), upd, start, step)
	setData(out, d)
}

func (cpuBackend) SliceAssign(dst, upd *mlx.Array, start, step []int) {
	sliceScatter(ownBuf(dst).data, dst.Dims(), upd, start, step)
}

// ownBuf returns a's storage to write in place: its own, or, when a view
// shares it or it is itself a window onto another array's storage, a
// private copy that a takes instead.
func ownBuf(a *mlx.Array) *cpuBuf {
	b := cb(a)
	if b.refs.Load() > 1 || b.parent != nil {
		d := cloneData(b.data)
		releaseBuf(b)
		setData(a, d)
		b = cb(a)
	}
	return b
}

func sliceScatter(d any, shape []int, upd *mlx.Array, start, step []int) {
	if upd.Size() == 0 {
		return
	}
	if df, ok := d.([]float32); ok && upd.DType() == mlx.Float32 && copyRuns(df, shape, upd, start, step) {
		return
	}
	rs := mlx.RowStrides(shape)
	st := make([]int, len(rs))
	base := 0
	for i := range rs {
		st[i] = rs[i] * step[i]
		base += start[i] * rs[i]
	}
	scatterAny(d, cb(upd).data, makeStrided(upd.Dims(), st), base)
}

// copyRuns writes upd into the slice of d (shape) at start when every step
// is 1: the slice is then whole runs of contiguous elements, one per index
// of the axes before the last it cuts short (a KV-cache write is one run
// per head), copied without building a strided iterator. It reports false,
// writing nothing, when a step is not 1.
func copyRuns(d []float32, shape []int, upd *mlx.Array, start, step []int) bool {
	nd := len(shape)
	if nd == 0 {
		return false
	}
	for _, s := range step {
		if s != 1 {
			return false
		}
	}
	src := cb(upd).data.([]float32)
	// Axes from cut on are covered whole except cut itself: each run is
	// upd's extent there times the sizes after it.
	cut, run := 0, 1
	for i := nd - 1; i >= 0; i-- {
		run *= upd.Dims()[i]
		if upd.Dims()[i] != shape[i] {
			cut = i
			break
		}
	}
	rs, idx := mlx.RowStrides(shape), make([]int, nd)
	for o := 0; o < len(src); o += run {
		at := 0
		for i := 0; i <= cut; i++ {
			at += (start[i] + idx[i]) * rs[i]
		}
		copy(d[at:at+run], src[o:o+run])
		for i := cut - 1; i >= 0; i-- { // next index over the axes before cut
			if idx[i]++; idx[i] < upd.Dims()[i] {
				break
			}
			idx[i] = 0
		}
	}
	return true
}

func (cpuBackend) Concat(xs []*mlx.Array, axis int, out *mlx.Array) {
	d := allocData(out.DType(), out.Size())
	rs := mlx.RowStrides(out.Dims())
	off := 0
	for _, x := range xs {
		if x.Size() > 0 {
			scatterAny(d, cb(x).data, makeStrided(x.Dims(), rs), off*rs[axis])
		}
		off += x.Dims()[axis]
	}
	setData(out, d)
}

func (be cpuBackend) Pad(x *mlx.Array, low []int, value float64, out *mlx.Array) {
	be.Full(out, value)
	if x.Size() == 0 {
		return
	}
	rs := mlx.RowStrides(out.Dims())
	base := 0
	for i := range rs {
		base += low[i] * rs[i]
	}
	scatterAny(cb(out).data, cb(x).data, makeStrided(x.Dims(), rs), base)
}

// indicesOf returns integer index data as int, resolving negatives against n.
func indicesOf(idx *mlx.Array, n int) []int {
	r := make([]int, idx.Size())
	switch s := cb(idx).data.(type) {
	case []int32:
		for i, v := range s {
			r[i] = int(v)
		}
	case []uint32:
		for i, v := range s {
			r[i] = int(v)
		}
	case []uint8:
		for i, v := range s {
			r[i] = int(v)
		}
	}
	for i, v := range r {
		if v < 0 {
			v += n
		}
		if v < 0 || v >= n {
			panic(fmt.Sprintf("mlx.Take: index %d out of range for axis of size %d", r[i], n))
		}
		r[i] = v
	}
	return r
}

func (cpuBackend) Take(x, idx *mlx.Array, axis int, out *mlx.Array) {
	pre := mlx.ShapeSize(x.Dims()[:axis])
	n := x.Dims()[axis]
	post := mlx.ShapeSize(x.Dims()[axis+1:])
	ids := indicesOf(idx, n)
	d := allocData(out.DType(), out.Size())
	takeAny(d, cb(x).data, ids, pre, n, post)
	setData(out, d)
}

func takeAny(dst, src any, ids []int, pre, n, post int) {
	switch d := dst.(type) {
	case []float32:
		takeT(d, src.([]float32), ids, pre, n, post)
	case []uint16:
		takeT(d, src.([]uint16), ids, pre, n, post)
	case []int32:
		takeT(d, src.([]int32), ids, pre, n, post)
	case []uint32:
		takeT(d, src.([]uint32), ids, pre, n, post)
	case []uint8:
		takeT(d, src.([]uint8), ids, pre, n, post)
	}
}

func takeT[T any](dst, src []T, ids []int, pre, n, post int) {
	m := len(ids)
	parallelFor(pre*m, post, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			p, j := r/m, r%m
			copy(dst[r*post:(r+1)*post], src[(p*n+ids[j])*post:])
		}
	})
}

func (cpuBackend) TakeAlongAxis(x, idx *mlx.Array, axis int, out *mlx.Array) {
	n := x.Dims()[axis]
	ids := indicesOf(idx, n)
	// x may broadcast against idx on the other axes: give it 0 strides there.
	xs := mlx.RowStrides(x.Dims())
	for i := range xs {
		if x.Dims()[i] == 1 && i != axis {
			xs[i] = 0
		}
	}
	src := make([]int, len(ids))
	shape := out.Dims()
	nd := len(shape)
	for flat := range ids {
		r, off := flat, 0
		for d := nd - 1; d >= 0; d-- {
			c := r % shape[d]
			r /= shape[d]
			if d == axis {
				c = ids[flat]
			}
			off += c * xs[d]
		}
		src[flat] = off
	}
	d := allocData(out.DType(), out.Size())
	switch dd := d.(type) {
	case []float32:
		pickT(dd, cb(x).data.([]float32), src)
	case []uint16:
		pickT(dd, cb(x).data.([]uint16), src)
	case []int32:
		pickT(dd, cb(x).data.([]int32), src)
	case []uint32:
		pickT(dd, cb(x).data.([]uint32), src)
	case []uint8:
		pickT(dd, cb(x).data.([]uint8), src)
	}
	setData(out, d)
}

func pickT[T any](dst, src []T, at []int) {
	for i, o := range at {
		dst[i] = src[o]
	}
}
