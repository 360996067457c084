package cpu

import (
	"math"

	"hark/mlx"
)

func (cpuBackend) Binary(op mlx.BinaryOp, a, b, out *mlx.Array) {
	n := out.Size()
	if a.DType().IsFloat() && !op.IsComparison() && op != mlx.OpPow && op != mlx.OpRemainder &&
		a.Size() == n && b.Size() == n {
		// Same shapes (the residual adds and gating products of every
		// layer): one flat loop, no broadcast plan.
		af, bf := f32Of(a), f32Of(b)
		r := newF32(n)
		if serial(n, 1) {
			f32BinRow(op, r, af, 1, bf, 1)
		} else {
			parallelFor(n, 1, func(lo, hi int) { f32BinRow(op, r[lo:hi], af[lo:hi], 1, bf[lo:hi], 1) })
		}
		setPooledF32(out, r)
		return
	}
	p := makeBcast(out.Dims(), a.Dims(), b.Dims())
	if a.DType().IsFloat() {
		af, bf := f32Of(a), f32Of(b)
		if op.IsComparison() {
			r := make([]uint8, n)
			p.run(1, func(o int, offs []int, m int) {
				cmpRow(op, r[o:o+m], af[offs[0]:], p.istride[0], bf[offs[1]:], p.istride[1])
			})
			setData(out, r)
			return
		}
		r := newF32(n)
		cost := 1
		if op == mlx.OpPow || op == mlx.OpRemainder {
			cost = 8
		}
		p.run(cost, func(o int, offs []int, m int) {
			f32BinRow(op, r[o:o+m], af[offs[0]:], p.istride[0], bf[offs[1]:], p.istride[1])
		})
		setPooledF32(out, r)
		return
	}
	switch as := cb(a).data.(type) {
	case []int32:
		setData(out, intBinary(op, p, n, as, cb(b).data.([]int32), false))
	case []uint32:
		setData(out, intBinary(op, p, n, as, cb(b).data.([]uint32), false))
	case []uint8:
		setData(out, intBinary(op, p, n, as, cb(b).data.([]uint8), a.DType() == mlx.Bool))
	}
}

// f32BinRow computes one run; sa and sb are 0 (broadcast) or 1. The four
// common ops get dedicated loops per stride pattern so the compiler emits
// tight code; the rest go through a function value.
func f32BinRow(op mlx.BinaryOp, r, a []float32, sa int, b []float32, sb int) {
	n := len(r)
	if sa == 1 && sb == 1 {
		a, b = a[:n], b[:n]
		switch op {
		case mlx.OpAdd:
			for i := range r {
				r[i] = a[i] + b[i]
			}
			return
		case mlx.OpSub:
			for i := range r {
				r[i] = a[i] - b[i]
			}
			return
		case mlx.OpMul:
			for i := range r {
				r[i] = a[i] * b[i]
			}
			return
		case mlx.OpDiv:
			for i := range r {
				r[i] = a[i] / b[i]
			}
			return
		}
	} else if sa == 1 && sb == 0 {
		a = a[:n]
		y := b[0]
		switch op {
		case mlx.OpAdd:
			for i := range r {
				r[i] = a[i] + y
			}
			return
		case mlx.OpSub:
			for i := range r {
				r[i] = a[i] - y
			}
			return
		case mlx.OpMul:
			for i := range r {
				r[i] = a[i] * y
			}
			return
		case mlx.OpDiv:
			for i := range r {
				r[i] = a[i] / y
			}
			return
		}
	} else if sa == 0 && sb == 1 {
		b = b[:n]
		x := a[0]
		switch op {
		case mlx.OpAdd:
			for i := range r {
				r[i] = x + b[i]
			}
			return
		case mlx.OpSub:
			for i := range r {
				r[i] = x - b[i]
			}
			return
		case mlx.OpMul:
			for i := range r {
				r[i] = x * b[i]
			}
			return
		case mlx.OpDiv:
			for i := range r {
				r[i] = x / b[i]
			}
			return
		}
	}
	f := f32BinFunc(op)
	for i := range r {
		r[i] = f(a[i*sa], b[i*sb])
	}
}

func f32BinFunc(op mlx.BinaryOp) func(x, y float32) float32 {
	switch op {
	case mlx.OpAdd:
		return func(x, y float32) float32 { return x + y }
	case mlx.OpSub:
		return func(x, y float32) float32 { return x - y }
	case mlx.OpMul:
		return func(x, y float32) float32 { return x * y }
	case mlx.OpDiv:
		return func(x, y float32) float32 { return x / y }
	case mlx.OpMaximum:
		// NaN propagates, as in MLX
		return func(x, y float32) float32 {
			if x != x || x > y {
				return x
			}
			return y
		}
	case mlx.OpMinimum:
		return func(x, y float32) float32 {
			if x != x || x < y {
				return x
			}
			return y
		}
	case mlx.OpPow:
		return func(x, y float32) float32 { return float32(math.Pow(float64(x), float64(y))) }
	case mlx.OpRemainder:
		return func(x, y float32) float32 {
			m := float32(math.Mod(float64(x), float64(y)))
			if m != 0 && (m < 0) != (y < 0) {
				m += y
			}
			return m
		}
	case mlx.OpLogicalAnd:
		return func(x, y float32) float32 { return b2f(x != 0 && y != 0) }
	case mlx.OpLogicalOr:
		return func(x, y float32) float32 { return b2f(x != 0 || y != 0) }
	}
	panic("mlx: cpu: unsupported float binary op " + op.String())
}

func b2f(v bool) float32 {
	if v {
		return 1
	}
	return 0
}

func cmpRow[T int32 | uint32 | uint8 | float32](op mlx.BinaryOp, r []uint8, a []T, sa int, b []T, sb int) {
	for i := range r {
		x, y := a[i*sa], b[i*sb]
		var v bool
		switch op {
		case mlx.OpEqual:
			v = x == y
		case mlx.OpNotEqual:
			v = x != y
		case mlx.OpLess:
			v = x < y
		case mlx.OpLessEqual:
			v = x <= y
		case mlx.OpGreater:
			v = x > y
		case mlx.OpGreaterEqual:
			v = x >= y
		}
		if v {
			r[i] = 1
		} else {
			r[i] = 0
		}
	}
}

// intBinary handles integer and bool operands (division and pow never get
// here: they promote to float). Arithmetic wraps like C; bool results are
// normalised to 0/1.
func intBinary[T int32 | uint32 | uint8](op mlx.BinaryOp, p *bcast, n int, a, b []T, isBool bool) any {
	if op.IsComparison() || op == mlx.OpLogicalAnd || op == mlx.OpLogicalOr {
		r := make([]uint8, n)
		p.run(1, func(o int, offs []int, m int) {
			if op.IsComparison() {
				cmpRow(op, r[o:o+m], a[offs[0]:], p.istride[0], b[offs[1]:], p.istride[1])
				return
			}
			for i := 0; i < m; i++ {
				x, y := a[offs[0]+i*p.istride[0]] != 0, b[offs[1]+i*p.istride[1]] != 0
				if (op == mlx.OpLogicalAnd && x && y) || (op == mlx.OpLogicalOr && (x || y)) {
					r[o+i] = 1
				}
			}
		})
		return r
	}
	r := make([]T, n)
	p.run(1, func(o int, offs []int, m int) {
		sa, sb := p.istride[0], p.istride[1]
		aa, bb := a[offs[0]:], b[offs[1]:]
		rr := r[o : o+m]
		for i := range rr {
			x, y := aa[i*sa], bb[i*sb]
			var v T
			switch op {
			case mlx.OpAdd:
				v = x + y
			case mlx.OpSub:
				v = x - y
			case mlx.OpMul:
				v = x * y
			case mlx.OpMaximum:
				v = max(x, y)
			case mlx.OpMinimum:
				v = min(x, y)
			case mlx.OpRemainder:
				if y != 0 {
					v = x % y
					if v != 0 && (v < 0) != (y < 0) {
						v += y
					}
				}
			default:
				panic("mlx: cpu: unsupported integer binary op " + op.String())
			}
			if isBool && v != 0 {
				v = 1
			}
			rr[i] = v
		}
	})
	return r
}

func (cpuBackend) Where(cond, a, b, out *mlx.Array) {
	p := makeBcast(out.Dims(), cond.Dims(), a.Dims(), b.Dims())
	c := cb(cond).data.([]uint8)
	n := out.Size()
	switch as := cb(a).data.(type) {
	case []float32:
		setData(out, whereT(p, n, c, as, cb(b).data.([]float32)))
	case []uint16:
		setData(out, whereT(p, n, c, as, cb(b).data.([]uint16)))
	case []int32:
		setData(out, whereT(p, n, c, as, cb(b).data.([]int32)))
	case []uint32:
		setData(out, whereT(p, n, c, as, cb(b).data.([]uint32)))
	case []uint8:
		setData(out, whereT(p, n, c, as, cb(b).data.([]uint8)))
	}
}

func whereT[T any](p *bcast, n int, c []uint8, a, b []T) []T {
	r := make([]T, n)
	p.run(1, func(o int, offs []int, m int) {
		sc, sa, sb := p.istride[0], p.istride[1], p.istride[2]
		for i := 0; i < m; i++ {
			if c[offs[0]+i*sc] != 0 {
				r[o+i] = a[offs[1]+i*sa]
			} else {
				r[o+i] = b[offs[2]+i*sb]
			}
		}
	})
	return r
}

func (cpuBackend) Clip(x *mlx.Array, lo, hi float64, out *mlx.Array) {
	if x.DType().IsFloat() {
		f := f32Of(x)
		r := make([]float32, len(f))
		l, h := float32(lo), float32(hi)
		for i, v := range f {
			r[i] = min(max(v, l), h)
		}
		setF32(out, r)
		return
	}
	clampI := func(v float64) float64 { return math.Min(math.Max(v, lo), hi) }
	f := x.Float64s()
	for i, v := range f {
		f[i] = clampI(v)
	}
	setData(out, fromF64(out.DType(), f))
}
