package mlxc

import "hark/mlx"

// Transpose implements mlx.Backend.
func (b *Backend) Transpose(x *mlx.Array, perm []int, out *mlx.Array) {
	b.op("Transpose", out, func(c *g) array { return c.transpose(handle(x), perm) })
}

// BroadcastTo implements mlx.Backend.
func (b *Backend) BroadcastTo(x, out *mlx.Array) {
	b.op("BroadcastTo", out, func(c *g) array {
		var r array
		sp, n := ints(out.Dims())
		return c.ok(c.l.mlx_broadcast_to(&r, handle(x), sp, n, c.b.s), r)
	})
}

// Slice implements mlx.Backend: out's shape gives the count on each axis.
func (b *Backend) Slice(x *mlx.Array, start, stride []int, out *mlx.Array) {
	b.op("Slice", out, func(c *g) array { return c.strided(handle(x), start, stride, out.Dims()) })
}

// strided takes count[i] elements from start[i] every stride[i] on each
// axis. Positive strides are one MLX slice; an axis walked backwards is
// gathered with explicit indices, which avoids MLX's Python-style reading
// of a negative stop.
func (c *g) strided(x array, start, stride, count []int) array {
	nd := len(count)
	lo, hi, st := make([]int, nd), make([]int, nd), make([]int, nd)
	var back []int
	for i := range count {
		if stride[i] > 0 || count[i] == 0 {
			lo[i], st[i] = start[i], max(stride[i], 1)
			hi[i] = start[i] + (count[i]-1)*st[i] + 1
			if count[i] == 0 {
				hi[i] = start[i]
			}
			continue
		}
		// backwards: keep the axis whole here, gather below
		lo[i], hi[i], st[i] = 0, c.shape(x)[i], 1
		back = append(back, i)
	}
	r := c.slice(x, lo, hi, st)
	for _, ax := range back {
		idx := make([]int32, count[ax])
		for j := range idx {
			idx[j] = int32(start[ax] + j*stride[ax])
		}
		ih := c.fromHostInts(idx)
		var t array
		r = c.ok(c.l.mlx_take_axis(&t, r, ih, int32(ax), c.b.s), t)
	}
	return r
}

func (c *g) fromHostInts(v []int32) array {
	if len(v) == 0 {
		return c.fromHost(nil, []int{0}, dtInt32)
	}
	return c.fromHost(ptr(v), []int{len(v)}, dtInt32)
}

// SliceUpdate implements mlx.Backend: dst with the strided window
// replaced by upd.
func (b *Backend) SliceUpdate(dst, upd *mlx.Array, start, stride []int, out *mlx.Array) {
	b.op("SliceUpdate", out, func(c *g) array { return c.sliceUpdate("SliceUpdate", handle(dst), handle(upd), start, stride) })
}

func (c *g) sliceUpdate(op string, dst, upd array, start, stride []int) array {
	count := c.shape(upd)
	nd := len(count)
	lo, hi := make([]int, nd), make([]int, nd)
	for i := range count {
		if stride[i] <= 0 {
			panic(unsupported(op, "a negative stride"))
		}
		lo[i] = start[i]
		hi[i] = start[i] + (count[i]-1)*stride[i] + 1
		if count[i] == 0 {
			hi[i] = start[i]
		}
	}
	var r array
	p1, n1 := ints(lo)
	p2, n2 := ints(hi)
	p3, n3 := ints(stride)
	return c.ok(c.l.mlx_slice_update(&r, dst, upd, p1, n1, p2, n2, p3, n3, c.b.s), r)
}

// SliceAssign implements mlx.Backend functionally: dst's storage becomes
// a new graph node, so views taken earlier keep the old contents, and
// MLX updates in place when nothing else holds the old buffer.
func (b *Backend) SliceAssign(dst, upd *mlx.Array, start, stride []int) {
	b.w.run(func() {
		c := &g{b: b, l: b.lib, op: "SliceAssign"}
		defer c.release()
		old := handle(dst)
		r := c.sliceUpdate(c.op, old, handle(upd), start, stride)
		if got := c.dtypeOf(r); got != mlxDtype(dst.DType()) {
			r = c.astype(r, mlxDtype(dst.DType()))
		}
		var keep array
		c.b.check(c.op, c.l.mlx_array_set(&keep, r))
		dst.SetStorage(keep)
		c.tmps = append(c.tmps, old)
	})
}

// Concat implements mlx.Backend.
func (b *Backend) Concat(xs []*mlx.Array, axis int, out *mlx.Array) {
	b.op("Concat", out, func(c *g) array {
		v := c.l.mlx_vector_array_new()
		defer c.l.mlx_vector_array_free(v)
		for _, x := range xs {
			c.b.check(c.op, c.l.mlx_vector_array_append_value(v, handle(x)))
		}
		var r array
		return c.ok(c.l.mlx_concatenate_axis(&r, v, int32(axis), c.b.s), r)
	})
}

// Pad implements mlx.Backend: low on each axis before, whatever out's
// shape leaves after.
func (b *Backend) Pad(x *mlx.Array, low []int, value float64, out *mlx.Array) {
	b.op("Pad", out, func(c *g) array {
		xh := handle(x)
		in := c.shape(xh)
		axes, high := make([]int, len(in)), make([]int, len(in))
		for i := range in {
			axes[i] = i
			high[i] = out.Dims()[i] - in[i] - low[i]
		}
		v := c.scalar(value, c.dtypeOf(xh))
		var r array
		ap, an := ints(axes)
		lp, ln := ints(low)
		hp, hn := ints(high)
		return c.ok(c.l.mlx_pad(&r, xh, ap, an, lp, ln, hp, hn, v, "constant", c.b.s), r)
	})
}

// Take implements mlx.Backend.
func (b *Backend) Take(x, idx *mlx.Array, axis int, out *mlx.Array) {
	b.op("Take", out, func(c *g) array {
		var r array
		return c.ok(c.l.mlx_take_axis(&r, handle(x), handle(idx), int32(axis), c.b.s), r)
	})
}

// TakeAlongAxis implements mlx.Backend.
func (b *Backend) TakeAlongAxis(x, idx *mlx.Array, axis int, out *mlx.Array) {
	b.op("TakeAlongAxis", out, func(c *g) array {
		var r array
		return c.ok(c.l.mlx_take_along_axis(&r, handle(x), handle(idx), int32(axis), c.b.s), r)
	})
}
