package cpu

import (
	"math"

	"hark/mlx"
)

func (cpuBackend) Unary(op mlx.UnaryOp, x, out *mlx.Array) {
	if out.DType() == mlx.Bool && (op == mlx.OpLogicalNot || op == mlx.OpIsNaN || op == mlx.OpIsInf) {
		f := f32OrNil(x)
		n := x.Size()
		r := make([]uint8, n)
		for i := range r {
			var v bool
			switch op {
			case mlx.OpLogicalNot:
				if f != nil {
					v = f[i] == 0
				} else {
					v = intAt(x, i) == 0
				}
			case mlx.OpIsNaN:
				v = f != nil && f[i] != f[i]
			case mlx.OpIsInf:
				v = f != nil && math.IsInf(float64(f[i]), 0)
			}
			if v {
				r[i] = 1
			}
		}
		setData(out, r)
		return
	}
	if !out.DType().IsFloat() {
		intUnary(op, x, out)
		return
	}
	src := f32Of(x)
	r := newF32(len(src))
	cost := 1
	if op >= mlx.OpExp {
		cost = 16
	}
	parallelFor(len(src), cost, func(lo, hi int) { f32UnaryRow(op, r[lo:hi], src[lo:hi]) })
	setPooledF32(out, r)
}

func (cpuBackend) SwiGLU(gate, up, out *mlx.Array) {
	if swigluStrided(gate, up, out) {
		return
	}
	g, u := f32Of(gate), f32Of(up)
	r := newF32(len(g))
	// Split as Unary splits Silu (cost 16) and rounded as Mul rounds, so
	// the results equal Mul(Silu(gate), up) bit for bit.
	if serial(len(g), 16) { // decode: no closure to allocate
		swigluRow(r, g, u)
	} else {
		parallelFor(len(g), 16, func(lo, hi int) { swigluRow(r[lo:hi], g[lo:hi], u[lo:hi]) })
	}
	setPooledF32(out, r)
}

// swigluStrided is SwiGLU on the two halves of a fused gate/up
// projection, read in place row by row: prefill's halves are row-strided
// views, which f32Of would first copy (two 10 MB buffers per layer for a
// 512-token chunk of a 0.5B model). It reports false, doing nothing, for
// other layouts.
func swigluStrided(gate, up, out *mlx.Array) bool {
	gd, goff, gs, rows, cols, ok := rowView(gate)
	if !ok || rows < 2 {
		return false
	}
	ud, uoff, us, urows, ucols, ok := rowView(up)
	if !ok || urows != rows || ucols != cols {
		return false
	}
	r := newF32(rows * cols)
	// Elementwise, so any split gives Mul(Silu(gate), up) bit for bit.
	parallelFor(rows, 16*cols, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			swigluRow(r[i*cols:(i+1)*cols], gd[goff+i*gs:goff+i*gs+cols], ud[uoff+i*us:uoff+i*us+cols])
		}
	})
	setPooledF32(out, r)
	return true
}

// rowView describes a float32 view whose rows (the last axis) are each
// contiguous, a fixed stride apart, with at most one leading axis longer
// than 1: its storage, the first row's offset, the row stride, the rows
// and their length.
func rowView(x *mlx.Array) (data []float32, off, stride, rows, cols int, ok bool) {
	v, isView := x.Storage().(*cpuView)
	if !isView || x.DType() != mlx.Float32 {
		return nil, 0, 0, 0, 0, false
	}
	dims := x.Dims()
	n := len(dims)
	if n < 2 || v.strides[n-1] != 1 {
		return nil, 0, 0, 0, 0, false
	}
	rows, stride = 1, 0
	for j := range n - 1 {
		if dims[j] == 1 {
			continue
		}
		if rows != 1 {
			return nil, 0, 0, 0, 0, false
		}
		rows, stride = dims[j], v.strides[j]
	}
	return v.buf.data.([]float32), v.off, stride, rows, dims[n-1], true
}

func swigluRow(r, g, u []float32) {
	siluRow(r, g)
	for i, v := range u {
		r[i] *= v
	}
}

func f32OrNil(x *mlx.Array) []float32 {
	if x.DType().IsFloat() {
		return f32Of(x)
	}
	return nil
}

func intAt(x *mlx.Array, i int) int64 {
	switch s := cb(x).data.(type) {
	case []int32:
		return int64(s[i])
	case []uint32:
		return int64(s[i])
	case []uint8:
		return int64(s[i])
	}
	panic("mlx: cpu: intAt on float")
}

func f32UnaryRow(op mlx.UnaryOp, r, a []float32) {
	switch op {
	case mlx.OpNeg:
		for i, v := range a {
			r[i] = -v
		}
		return
	case mlx.OpAbs:
		for i, v := range a {
			r[i] = float32(math.Abs(float64(v)))
		}
		return
	case mlx.OpSquare:
		for i, v := range a {
			r[i] = v * v
		}
		return
	case mlx.OpRelu:
		for i, v := range a {
			if v > 0 {
				r[i] = v
			} else if v != v {
				r[i] = v
			} else {
				r[i] = 0
			}
		}
		return
	case mlx.OpSilu:
		// Silu gates every MLP: float32 SIMD where cgo is on.
		siluRow(r, a)
		return
	case mlx.OpGelu:
		// Gelu is in every Whisper and BERT-style MLP: float32 where cgo is on.
		geluRow(r, a)
		return
	case mlx.OpSigmoid:
		for i, v := range a {
			r[i] = float32(sigmoid64(float64(v)))
		}
		return
	}
	f := f64Unary(op)
	for i, v := range a {
		r[i] = float32(f(float64(v)))
	}
}

// f64Unary gives the scalar function of op. Computing in float64 and
// rounding once keeps results within one float32 ulp of the exact value.
func f64Unary(op mlx.UnaryOp) func(float64) float64 {
	switch op {
	case mlx.OpSqrt:
		return math.Sqrt
	case mlx.OpRsqrt:
		return func(x float64) float64 { return 1 / math.Sqrt(x) }
	case mlx.OpReciprocal:
		return func(x float64) float64 { return 1 / x }
	case mlx.OpExp:
		return expFast
	case mlx.OpLog:
		return math.Log
	case mlx.OpLog1p:
		return math.Log1p
	case mlx.OpSin:
		return math.Sin
	case mlx.OpCos:
		return math.Cos
	case mlx.OpTanh:
		return math.Tanh
	case mlx.OpErf:
		return math.Erf
	case mlx.OpSigmoid:
		return sigmoid64
	case mlx.OpSilu:
		return func(x float64) float64 { return x * sigmoid64(x) }
	case mlx.OpGelu:
		return func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
	case mlx.OpGeluApprox:
		return func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		}
	case mlx.OpGeluFast:
		return func(x float64) float64 { return x * sigmoid64(1.702*x) }
	case mlx.OpFloor:
		return math.Floor
	case mlx.OpCeil:
		return math.Ceil
	case mlx.OpRound:
		return math.RoundToEven
	}
	panic("mlx: cpu: unsupported unary op")
}

func sigmoid64(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + expFast(-x))
	}
	e := expFast(x)
	return e / (1 + e)
}

func intUnary(op mlx.UnaryOp, x, out *mlx.Array) {
	switch s := cb(x).data.(type) {
	case []int32:
		setData(out, intUnaryT(op, s, false))
	case []uint32:
		setData(out, intUnaryT(op, s, false))
	case []uint8:
		setData(out, intUnaryT(op, s, x.DType() == mlx.Bool))
	}
}

func intUnaryT[T int32 | uint32 | uint8](op mlx.UnaryOp, a []T, isBool bool) []T {
	r := make([]T, len(a))
	for i, v := range a {
		switch op {
		case mlx.OpNeg:
			if isBool {
				r[i] = v
			} else {
				r[i] = -v
			}
		case mlx.OpAbs:
			if v < 0 {
				v = -v
			}
			r[i] = v
		case mlx.OpSquare:
			r[i] = v * v
		case mlx.OpRelu:
			r[i] = max(v, 0)
		default: // floor, ceil, round are the identity on integers
			r[i] = v
		}
	}
	return r
}
