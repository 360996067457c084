package mlxc

import (
	"fmt"
	"math"

	"hark/mlx"
)

// Unary implements mlx.Backend. Hark computes half-precision inputs in
// float32 and rounds once; MLX rounds some functions in the half type, so
// every op that is not exact in the half type runs widened. Functions
// mlx-c lacks (silu, the gelus) are composed with the cpu backend's
// formulas.
func (b *Backend) Unary(op mlx.UnaryOp, x, out *mlx.Array) {
	b.op("Unary", out, func(c *g) array {
		xh := handle(x)
		in := c.dtypeOf(xh)
		switch op {
		case mlx.OpLogicalNot:
			return c.un(c.l.mlx_logical_not, xh)
		case mlx.OpIsNaN:
			return c.un(c.l.mlx_isnan, xh)
		case mlx.OpIsInf:
			return c.un(c.l.mlx_isinf, xh)
		}
		if !isFloat(in) {
			return c.intUnary(op, xh, in, out)
		}
		switch op {
		case mlx.OpNeg:
			return c.un(c.l.mlx_negative, xh)
		case mlx.OpAbs:
			return c.un(c.l.mlx_abs, xh)
		case mlx.OpSquare:
			return c.un(c.l.mlx_square, xh)
		case mlx.OpSqrt:
			return c.un(c.l.mlx_sqrt, xh)
		case mlx.OpFloor:
			return c.un(c.l.mlx_floor, xh)
		case mlx.OpCeil:
			return c.un(c.l.mlx_ceil, xh)
		case mlx.OpRound:
			var r array
			return c.ok(c.l.mlx_round(&r, xh, 0, c.b.s), r)
		case mlx.OpRelu:
			// maximum keeps NaN, as the cpu backend's relu does
			return c.bin(c.l.mlx_maximum, xh, c.scalar(0, in))
		}
		return c.floatUnary(op, c.wide(xh))
	})
}

// floatUnary applies a float32 function.
func (c *g) floatUnary(op mlx.UnaryOp, x array) array {
	switch op {
	case mlx.OpSqrt:
		return c.un(c.l.mlx_sqrt, x)
	case mlx.OpRsqrt:
		return c.un(c.l.mlx_rsqrt, x)
	case mlx.OpReciprocal:
		return c.un(c.l.mlx_reciprocal, x)
	case mlx.OpExp:
		return c.un(c.l.mlx_exp, x)
	case mlx.OpLog:
		return c.un(c.l.mlx_log, x)
	case mlx.OpLog1p:
		return c.un(c.l.mlx_log1p, x)
	case mlx.OpSin:
		return c.un(c.l.mlx_sin, x)
	case mlx.OpCos:
		return c.un(c.l.mlx_cos, x)
	case mlx.OpTanh:
		return c.un(c.l.mlx_tanh, x)
	case mlx.OpErf:
		return c.un(c.l.mlx_erf, x)
	case mlx.OpSigmoid:
		return c.un(c.l.mlx_sigmoid, x)
	case mlx.OpSilu:
		return c.silu(x)
	case mlx.OpGelu:
		// 0.5*x*(1+erf(x/sqrt 2))
		e := c.un(c.l.mlx_erf, c.mul(x, c.f32(1/math.Sqrt2)))
		return c.mul(c.mul(x, c.f32(0.5)), c.add(e, c.f32(1)))
	case mlx.OpGeluApprox:
		// 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))
		x3 := c.mul(c.mul(x, x), x)
		in := c.mul(c.add(x, c.mul(x3, c.f32(0.044715))), c.f32(math.Sqrt(2/math.Pi)))
		t := c.un(c.l.mlx_tanh, in)
		return c.mul(c.mul(x, c.f32(0.5)), c.add(t, c.f32(1)))
	case mlx.OpGeluFast:
		// x*sigmoid(1.702*x)
		return c.mul(x, c.un(c.l.mlx_sigmoid, c.mul(x, c.f32(1.702))))
	}
	panic(unsupported("Unary", "unary op "+opName(op)))
}

func (c *g) silu(x array) array { return c.mul(x, c.un(c.l.mlx_sigmoid, x)) }

func opName(op mlx.UnaryOp) string { return fmt.Sprintf("UnaryOp(%d)", op) }

// intUnary: integer and bool inputs. Float-only functions turn them into
// float32 first; the rest act as the cpu backend's integer kernels do
// (negating a bool or taking |x| of an unsigned value changes nothing,
// and rounding is the identity).
func (c *g) intUnary(op mlx.UnaryOp, x array, in dtype, out *mlx.Array) array {
	switch op {
	case mlx.OpNeg:
		switch in {
		case dtBool:
			return c.copyOf(x)
		case dtInt32:
			return c.un(c.l.mlx_negative, x)
		}
		// unsigned: wraps like the cpu backend's -v
		return c.bin(c.l.mlx_subtract, c.scalar(0, in), x)
	case mlx.OpAbs:
		if in == dtInt32 {
			return c.un(c.l.mlx_abs, x)
		}
		return c.copyOf(x)
	case mlx.OpSquare:
		return c.mul(x, x)
	case mlx.OpRelu:
		return c.bin(c.l.mlx_maximum, x, c.scalar(0, in))
	case mlx.OpFloor, mlx.OpCeil, mlx.OpRound:
		return c.copyOf(x)
	}
	return c.floatUnary(op, c.astype(x, dtFloat32))
}

func (c *g) copyOf(x array) array {
	var r array
	return c.ok(c.l.mlx_copy(&r, x, c.b.s), r)
}

// Binary implements mlx.Backend; a and b come with the compute dtype.
func (b *Backend) Binary(op mlx.BinaryOp, x, y, out *mlx.Array) {
	b.op("Binary", out, func(c *g) array {
		xh, yh := handle(x), handle(y)
		var f binFn
		switch op {
		case mlx.OpAdd:
			f = c.l.mlx_add
		case mlx.OpSub:
			f = c.l.mlx_subtract
		case mlx.OpMul:
			f = c.l.mlx_multiply
		case mlx.OpDiv:
			f = c.l.mlx_divide
		case mlx.OpMaximum:
			f = c.l.mlx_maximum
		case mlx.OpMinimum:
			f = c.l.mlx_minimum
		case mlx.OpPow:
			f = c.l.mlx_power
			// not exact in half precision: computed in float32
			xh, yh = c.wide(xh), c.wide(yh)
		case mlx.OpRemainder:
			f = c.l.mlx_remainder
			xh, yh = c.wide(xh), c.wide(yh)
		case mlx.OpEqual:
			f = c.l.mlx_equal
		case mlx.OpNotEqual:
			f = c.l.mlx_not_equal
		case mlx.OpLess:
			f = c.l.mlx_less
		case mlx.OpLessEqual:
			f = c.l.mlx_less_equal
		case mlx.OpGreater:
			f = c.l.mlx_greater
		case mlx.OpGreaterEqual:
			f = c.l.mlx_greater_equal
		case mlx.OpLogicalAnd:
			f = c.l.mlx_logical_and
		case mlx.OpLogicalOr:
			f = c.l.mlx_logical_or
		default:
			panic(unsupported("Binary", op.String()))
		}
		return c.bin(f, xh, yh)
	})
}

// Where implements mlx.Backend.
func (b *Backend) Where(cond, x, y, out *mlx.Array) {
	b.op("Where", out, func(c *g) array { return c.where(handle(cond), handle(x), handle(y)) })
}

// Clip implements mlx.Backend; an infinite bound leaves that side open.
// Floats clamp in float32 against bounds rounded to float32, integers
// against the bounds truncated toward zero, as the cpu backend's
// float64 clamp followed by its conversion does.
func (b *Backend) Clip(x *mlx.Array, lo, hi float64, out *mlx.Array) {
	b.op("Clip", out, func(c *g) array {
		xh := handle(x)
		dt := c.dtypeOf(xh)
		var l, h array
		if isFloat(dt) {
			xh = c.wide(xh)
			if !math.IsInf(lo, 0) {
				l = c.f32(lo)
			}
			if !math.IsInf(hi, 0) {
				h = c.f32(hi)
			}
		} else {
			top := map[dtype]float64{dtBool: 1, dtUint8: 255, dtUint32: math.MaxUint32, dtInt32: math.MaxInt32}[dt]
			bottom := map[dtype]float64{dtInt32: math.MinInt32}[dt]
			if lo > bottom {
				l = c.scalar(math.Trunc(min(lo, top)), dt)
			}
			if hi < top {
				h = c.scalar(math.Trunc(max(hi, bottom)), dt)
			}
		}
		if l == 0 && h == 0 {
			return c.copyOf(xh)
		}
		var r array
		return c.ok(c.l.mlx_clip(&r, xh, l, h, c.b.s), r)
	})
}
