package mlxc

import "hark/mlx"

type axesFn func(res *array, a array, axes *int32, n uintptr, keep bool, s stream) int32

// Reduce implements mlx.Backend. Sums and products of half types
// accumulate in float32 (widened here, rounded once by finish); small
// integers sum in int32 as out's dtype says.
func (b *Backend) Reduce(op mlx.ReduceOp, x *mlx.Array, axes []int, out *mlx.Array) {
	b.op("Reduce", out, func(c *g) array {
		xh := handle(x)
		var f axesFn
		switch op {
		case mlx.ReduceSum:
			f = c.l.mlx_sum_axes
		case mlx.ReduceProd:
			f = c.l.mlx_prod_axes
		case mlx.ReduceMax:
			f = c.l.mlx_max_axes
		case mlx.ReduceMin:
			f = c.l.mlx_min_axes
		case mlx.ReduceAll:
			f = c.l.mlx_all_axes
		case mlx.ReduceAny:
			f = c.l.mlx_any_axes
		default:
			panic(unsupported("Reduce", "reduction kind"))
		}
		if op == mlx.ReduceSum || op == mlx.ReduceProd {
			xh = c.wide(xh)
			if od := mlxDtype(out.DType()); !isFloat(od) && c.dtypeOf(xh) != od {
				xh = c.astype(xh, od)
			}
		}
		if len(axes) == 0 {
			return c.reshape(c.copyOf(xh), out.Dims())
		}
		var r array
		ap, n := ints(axes)
		r = c.ok(f(&r, xh, ap, n, false, c.b.s), r)
		return c.reshape(r, out.Dims())
	})
}

// ArgReduce implements mlx.Backend; MLX gives uint32 indices.
func (b *Backend) ArgReduce(op mlx.ReduceOp, x *mlx.Array, axis int, out *mlx.Array) {
	b.op("ArgReduce", out, func(c *g) array {
		var r array
		switch op {
		case mlx.ReduceArgMax:
			r = c.ok(c.l.mlx_argmax_axis(&r, handle(x), int32(axis), false, c.b.s), r)
		case mlx.ReduceArgMin:
			r = c.ok(c.l.mlx_argmin_axis(&r, handle(x), int32(axis), false, c.b.s), r)
		default:
			panic(unsupported("ArgReduce", "reduction kind"))
		}
		return c.reshape(r, out.Dims())
	})
}

// Cumsum implements mlx.Backend, in float32 for half types.
func (b *Backend) Cumsum(x *mlx.Array, axis int, reverse, inclusive bool, out *mlx.Array) {
	b.op("Cumsum", out, func(c *g) array {
		xh := c.wide(handle(x))
		if od := mlxDtype(out.DType()); !isFloat(od) && c.dtypeOf(xh) != od {
			xh = c.astype(xh, od)
		}
		var r array
		return c.ok(c.l.mlx_cumsum(&r, xh, int32(axis), reverse, inclusive, c.b.s), r)
	})
}

// Sort implements mlx.Backend (ascending, NaN last; arg sorts stably).
func (b *Backend) Sort(x *mlx.Array, axis int, arg bool, out *mlx.Array) {
	b.op("Sort", out, func(c *g) array {
		var r array
		if arg {
			return c.ok(c.l.mlx_argsort_axis(&r, handle(x), int32(axis), c.b.s), r)
		}
		return c.ok(c.l.mlx_sort_axis(&r, handle(x), int32(axis), c.b.s), r)
	})
}

// TopK implements mlx.Backend. MLX's topk leaves the order unspecified,
// so this sorts instead: a stable ascending argsort of the negated values
// (widened so negation cannot overflow; NaN counted largest, as the cpu
// backend counts it) gives the largest first, ties in index order.
func (b *Backend) TopK(x *mlx.Array, k, axis int, arg bool, out *mlx.Array) {
	b.op("TopK", out, func(c *g) array {
		xh := handle(x)
		key := xh
		switch dt := c.dtypeOf(xh); {
		case isFloat(dt):
			neg := c.un(c.l.mlx_negative, xh)
			key = c.where(c.un(c.l.mlx_isnan, xh), c.scalar(negInf, dt), neg)
		case dt == dtBool || dt == dtUint8:
			key = c.un(c.l.mlx_negative, c.astype(xh, dtInt32))
		default:
			key = c.un(c.l.mlx_negative, c.astype(xh, dtInt64))
		}
		var idx array
		idx = c.ok(c.l.mlx_argsort_axis(&idx, key, int32(axis), c.b.s), idx)
		n := len(c.shape(idx))
		lo, hi, st := make([]int, n), c.shape(idx), make([]int, n)
		for i := range st {
			st[i] = 1
		}
		hi[axis] = k
		idx = c.slice(idx, lo, hi, st)
		if arg {
			return idx
		}
		var r array
		return c.ok(c.l.mlx_take_along_axis(&r, xh, idx, int32(axis), c.b.s), r)
	})
}
