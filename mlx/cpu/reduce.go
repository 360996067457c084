package cpu

import (
	"math"
	"slices"

	"hark/mlx"
)

// trailing returns x's data rearranged so that the given axes are last and
// contiguous, with the row length (product of those axes). When they already
// are, the storage itself is returned.
func trailing(x *mlx.Array, axes []int) (any, int) {
	nd := len(x.Dims())
	r := 1
	for _, a := range axes {
		r *= x.Dims()[a]
	}
	isTrailing := true
	for i, a := range axes {
		if a != nd-len(axes)+i {
			isTrailing = false
		}
	}
	if isTrailing {
		return cb(x).data, r
	}
	var perm []int
	for i := 0; i < nd; i++ {
		if !slices.Contains(axes, i) {
			perm = append(perm, i)
		}
	}
	perm = append(perm, axes...)
	rs := mlx.RowStrides(x.Dims())
	st := make([]int, nd)
	sh := make([]int, nd)
	for i, p := range perm {
		st[i], sh[i] = rs[p], x.Dims()[p]
	}
	d := allocData(x.DType(), x.Size())
	gatherAny(d, cb(x).data, makeStrided(sh, st), 0)
	return d, r
}

// asF64Rows converts storage to float64 (exact for every dtype).
func asF64(dt mlx.DType, d any) []float64 {
	switch s := d.(type) {
	case []float32:
		r := make([]float64, len(s))
		for i, v := range s {
			r[i] = float64(v)
		}
		return r
	case []uint16:
		r := make([]float64, len(s))
		for i, v := range s {
			if dt == mlx.Float16 {
				r[i] = float64(mlx.F16Table()[v])
			} else {
				r[i] = float64(mlx.BF16ToF32(v))
			}
		}
		return r
	case []int32:
		r := make([]float64, len(s))
		for i, v := range s {
			r[i] = float64(v)
		}
		return r
	case []uint32:
		r := make([]float64, len(s))
		for i, v := range s {
			r[i] = float64(v)
		}
		return r
	case []uint8:
		r := make([]float64, len(s))
		for i, v := range s {
			r[i] = float64(v)
		}
		return r
	}
	panic("mlx: cpu: bad storage")
}

func (cpuBackend) Reduce(op mlx.ReduceOp, x *mlx.Array, axes []int, out *mlx.Array) {
	d, r := trailing(x, axes)
	n := out.Size()
	res := make([]float64, n)
	if f, ok := d.([]float32); ok {
		parallelFor(n, r, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				res[i] = reduceF32Row(op, f[i*r:(i+1)*r])
			}
		})
	} else {
		f := asF64(x.DType(), d)
		parallelFor(n, r, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				res[i] = reduceF64Row(op, f[i*r:(i+1)*r])
			}
		})
	}
	if out.DType() == mlx.Int32 || out.DType() == mlx.Uint32 || out.DType() == mlx.Uint8 {
		// integer sums wrap like the C types MLX uses
		for i, v := range res {
			res[i] = float64(int64(v))
		}
	}
	setData(out, fromF64(out.DType(), res))
}

func reduceF32Row(op mlx.ReduceOp, row []float32) float64 {
	switch op {
	case mlx.ReduceSum:
		// four partial sums: faster and no less accurate than one
		var s0, s1, s2, s3 float64
		i := 0
		for ; i+4 <= len(row); i += 4 {
			s0 += float64(row[i])
			s1 += float64(row[i+1])
			s2 += float64(row[i+2])
			s3 += float64(row[i+3])
		}
		for ; i < len(row); i++ {
			s0 += float64(row[i])
		}
		return s0 + s1 + s2 + s3
	}
	f := make([]float64, len(row))
	for i, v := range row {
		f[i] = float64(v)
	}
	return reduceF64Row(op, f)
}

func reduceF64Row(op mlx.ReduceOp, row []float64) float64 {
	switch op {
	case mlx.ReduceSum:
		s := 0.0
		for _, v := range row {
			s += v
		}
		return s
	case mlx.ReduceProd:
		p := 1.0
		for _, v := range row {
			p *= v
		}
		return p
	case mlx.ReduceMax:
		m := math.Inf(-1)
		for _, v := range row {
			if v > m || v != v {
				m = v
				if v != v {
					break
				}
			}
		}
		return m
	case mlx.ReduceMin:
		m := math.Inf(1)
		for _, v := range row {
			if v < m || v != v {
				m = v
				if v != v {
					break
				}
			}
		}
		return m
	case mlx.ReduceAll:
		for _, v := range row {
			if v == 0 {
				return 0
			}
		}
		return 1
	case mlx.ReduceAny:
		for _, v := range row {
			if v != 0 {
				return 1
			}
		}
		return 0
	}
	panic("mlx: cpu: bad reduce op")
}

func (cpuBackend) ArgReduce(op mlx.ReduceOp, x *mlx.Array, axis int, out *mlx.Array) {
	d, r := trailing(x, []int{axis})
	n := out.Size()
	res := make([]uint32, n)
	if f, ok := d.([]float32); ok {
		argRows(op, f, r, res) // greedy decoding's argmax over the vocabulary
	} else {
		argRows(op, asF64(x.DType(), d), r, res)
	}
	setData(out, res)
}

// argRows writes the index of each row's max (or min); the first one wins
// ties and a NaN wins outright, as in MLX.
func argRows[T float32 | float64](op mlx.ReduceOp, f []T, r int, res []uint32) {
	for i := range res {
		row := f[i*r : (i+1)*r]
		best := 0
		for j := 1; j < r; j++ {
			v, b := row[j], row[best]
			if b != b {
				break
			}
			if (op == mlx.ReduceArgMax && (v > b || v != v)) || (op == mlx.ReduceArgMin && (v < b || v != v)) {
				best = j
			}
		}
		res[i] = uint32(best)
	}
}

// untrail scatters rows computed in trailing-axis order back to x's layout.
func untrail(dt mlx.DType, shape []int, axis int, rows any) any {
	nd := len(shape)
	if axis == nd-1 {
		return rows
	}
	// rows has shape perm(shape) with axis moved last; write it back.
	var perm []int
	for i := 0; i < nd; i++ {
		if i != axis {
			perm = append(perm, i)
		}
	}
	perm = append(perm, axis)
	rs := mlx.RowStrides(shape)
	st := make([]int, nd)
	sh := make([]int, nd)
	for i, p := range perm {
		st[i], sh[i] = rs[p], shape[p]
	}
	d := allocData(dt, mlx.ShapeSize(shape))
	scatterAny(d, rows, makeStrided(sh, st), 0)
	return d
}
