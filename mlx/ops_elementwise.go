package mlx

import (
	"fmt"
	"math"
	"slices"
)

// UnaryOp names an elementwise function of one array.
type UnaryOp uint8

const (
	OpNeg UnaryOp = iota
	OpAbs
	OpSquare
	OpSqrt
	OpRsqrt
	OpReciprocal
	OpExp
	OpLog
	OpLog1p
	OpSin
	OpCos
	OpTanh
	OpErf
	OpSigmoid
	OpSilu
	OpGelu
	OpGeluApprox
	OpGeluFast
	OpRelu
	OpFloor
	OpCeil
	OpRound
	OpLogicalNot
	OpIsNaN
	OpIsInf
)

// floatOnly ops turn integer inputs into float32 outputs, as MLX does.
func (op UnaryOp) floatOnly() bool {
	switch op {
	case OpNeg, OpAbs, OpSquare, OpRelu, OpFloor, OpCeil, OpRound, OpLogicalNot, OpIsNaN, OpIsInf:
		return false
	}
	return true
}

// BinaryOp names an elementwise function of two broadcast arrays.
type BinaryOp uint8

const (
	OpAdd BinaryOp = iota
	OpSub
	OpMul
	OpDiv
	OpMaximum
	OpMinimum
	OpPow
	OpRemainder
	OpEqual
	OpNotEqual
	OpLess
	OpLessEqual
	OpGreater
	OpGreaterEqual
	OpLogicalAnd
	OpLogicalOr
)

func (op BinaryOp) IsComparison() bool { return op >= OpEqual && op <= OpGreaterEqual }

var binaryNames = [...]string{"Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Pow", "Remainder",
	"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr"}

func (op BinaryOp) String() string { return binaryNames[op] }

// BroadcastShapes returns the numpy broadcast of the shapes, or an error.
func BroadcastShapes(shapes ...[]int) ([]int, error) {
	nd := 0
	for _, s := range shapes {
		nd = max(nd, len(s))
	}
	out := make([]int, nd)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := nd - len(s)
		for i, d := range s {
			o := out[off+i]
			switch {
			case d == o || d == 1:
			case o == 1:
				out[off+i] = d
			default:
				return nil, fmt.Errorf("shapes %v cannot broadcast", shapes)
			}
		}
	}
	return out, nil
}

func mustBroadcast(op string, shapes ...[]int) []int {
	s, err := BroadcastShapes(shapes...)
	if err != nil {
		panic("mlx." + op + ": " + err.Error())
	}
	return s
}

// unary applies op; integer/bool inputs of float-only ops become float32.
func unary(op UnaryOp, name string, x *Array) *Array {
	b := backendOf(name, x)
	dt := x.dtype
	if op.floatOnly() && !dt.IsFloat() {
		dt = Float32
	}
	if op == OpLogicalNot || op == OpIsNaN || op == OpIsInf {
		dt = Bool
	}
	out := newArray(b, dt, x.shape)
	b.Unary(op, x, out)
	return out
}

// Neg is -x.
func Neg(x *Array) *Array { return unary(OpNeg, "Neg", x) }

// Abs is |x|.
func Abs(x *Array) *Array { return unary(OpAbs, "Abs", x) }

// Square is x*x.
func Square(x *Array) *Array { return unary(OpSquare, "Square", x) }

// Sqrt is the square root.
func Sqrt(x *Array) *Array { return unary(OpSqrt, "Sqrt", x) }

// Rsqrt is 1/sqrt(x).
func Rsqrt(x *Array) *Array { return unary(OpRsqrt, "Rsqrt", x) }

// Reciprocal is 1/x.
func Reciprocal(x *Array) *Array { return unary(OpReciprocal, "Reciprocal", x) }

// Exp is e^x.
func Exp(x *Array) *Array { return unary(OpExp, "Exp", x) }

// Log is the natural logarithm.
func Log(x *Array) *Array { return unary(OpLog, "Log", x) }

// Log1p is log(1+x), accurate near 0.
func Log1p(x *Array) *Array { return unary(OpLog1p, "Log1p", x) }

// Sin is the sine.
func Sin(x *Array) *Array { return unary(OpSin, "Sin", x) }

// Cos is the cosine.
func Cos(x *Array) *Array { return unary(OpCos, "Cos", x) }

// Tanh is the hyperbolic tangent.
func Tanh(x *Array) *Array { return unary(OpTanh, "Tanh", x) }

// Erf is the error function.
func Erf(x *Array) *Array { return unary(OpErf, "Erf", x) }

// Sigmoid is 1/(1+e^-x).
func Sigmoid(x *Array) *Array { return unary(OpSigmoid, "Sigmoid", x) }

// Silu is x*sigmoid(x).
func Silu(x *Array) *Array { return unary(OpSilu, "Silu", x) }

// Gelu is the exact 0.5*x*(1+erf(x/sqrt 2)) (mlx.nn.gelu).
func Gelu(x *Array) *Array { return unary(OpGelu, "Gelu", x) }

// GeluApprox is the tanh approximation
// 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))) (mlx.nn.gelu_approx).
func GeluApprox(x *Array) *Array { return unary(OpGeluApprox, "GeluApprox", x) }

// GeluFast is x*sigmoid(1.702*x) (mlx.nn.gelu_fast_approx).
func GeluFast(x *Array) *Array { return unary(OpGeluFast, "GeluFast", x) }

// Relu is max(x, 0) (NaN stays NaN).
func Relu(x *Array) *Array { return unary(OpRelu, "Relu", x) }

// Floor rounds down.
func Floor(x *Array) *Array { return unary(OpFloor, "Floor", x) }

// Ceil rounds up.
func Ceil(x *Array) *Array { return unary(OpCeil, "Ceil", x) }

// Round rounds to the nearest integer, halves to even (as MLX).
func Round(x *Array) *Array { return unary(OpRound, "Round", x) }

// LogicalNot is x == 0, as bool.
func LogicalNot(x *Array) *Array { return unary(OpLogicalNot, "LogicalNot", x) }

// IsNaN reports NaN elements, as bool.
func IsNaN(x *Array) *Array { return unary(OpIsNaN, "IsNaN", x) }

// IsInf reports infinite elements, as bool.
func IsInf(x *Array) *Array { return unary(OpIsInf, "IsInf", x) }

// binary promotes a and b (PromoteTypes), broadcasts them and applies op.
func binaryOp(op BinaryOp, a, b *Array) *Array {
	name := op.String()
	be := backendOf(name, a, b)
	shape := a.shape // equal shapes (residual adds, gating): nothing to allocate
	if !slices.Equal(a.shape, b.shape) {
		shape = mustBroadcast(name, a.shape, b.shape)
	}
	dt := PromoteTypes(a.dtype, b.dtype)
	if (op == OpDiv || op == OpPow) && !dt.IsFloat() {
		dt = Float32 // true division, like MLX's divide
	}
	if op == OpLogicalAnd || op == OpLogicalOr {
		dt = Bool
	}
	ca, cb := castTo(a, dt), castTo(b, dt)
	odt := dt
	if op.IsComparison() {
		odt = Bool
	}
	out := newArray(be, odt, shape)
	be.Binary(op, ca, cb, out)
	if ca != a {
		ca.Free()
	}
	if cb != b {
		cb.Free()
	}
	return out
}

// castTo returns x itself when it already has dtype dt, else a converted copy
// the caller must free.
func castTo(x *Array, dt DType) *Array {
	if x.dtype == dt {
		return x
	}
	return AsType(x, dt)
}

// Add is a + b.
func Add(a, b *Array) *Array { return binaryOp(OpAdd, a, b) }

// Sub is a - b.
func Sub(a, b *Array) *Array { return binaryOp(OpSub, a, b) }

// Mul is a * b.
func Mul(a, b *Array) *Array { return binaryOp(OpMul, a, b) }

// Div is a / b; integer operands give float32 (true division).
func Div(a, b *Array) *Array { return binaryOp(OpDiv, a, b) }

// Maximum is the elementwise larger value; NaN propagates.
func Maximum(a, b *Array) *Array { return binaryOp(OpMaximum, a, b) }

// Minimum is the elementwise smaller value; NaN propagates.
func Minimum(a, b *Array) *Array { return binaryOp(OpMinimum, a, b) }

// Pow is a^b; integer operands give float32.
func Pow(a, b *Array) *Array { return binaryOp(OpPow, a, b) }

// Remainder is a mod b with the sign of b, like Python's %.
func Remainder(a, b *Array) *Array { return binaryOp(OpRemainder, a, b) }

// Equal is a == b, as bool.
func Equal(a, b *Array) *Array { return binaryOp(OpEqual, a, b) }

// NotEqual is a != b, as bool.
func NotEqual(a, b *Array) *Array { return binaryOp(OpNotEqual, a, b) }

// Less is a < b, as bool.
func Less(a, b *Array) *Array { return binaryOp(OpLess, a, b) }

// LessEqual is a <= b, as bool.
func LessEqual(a, b *Array) *Array { return binaryOp(OpLessEqual, a, b) }

// Greater is a > b, as bool.
func Greater(a, b *Array) *Array { return binaryOp(OpGreater, a, b) }

// GreaterEqual is a >= b, as bool.
func GreaterEqual(a, b *Array) *Array { return binaryOp(OpGreaterEqual, a, b) }

// LogicalAnd is (a != 0) && (b != 0), as bool.
func LogicalAnd(a, b *Array) *Array { return binaryOp(OpLogicalAnd, a, b) }

// LogicalOr is (a != 0) || (b != 0), as bool.
func LogicalOr(a, b *Array) *Array { return binaryOp(OpLogicalOr, a, b) }

// scalarFor makes a 0-d operand for a scalar op with a's dtype, following
// MLX's weak Python scalars: a float scalar keeps a float array's dtype and
// turns an integer or bool array into float32 only when it is not integral.
func scalarFor(a *Array, v float64) *Array {
	dt := a.dtype
	if !dt.IsFloat() && (v != math.Trunc(v) || dt == Bool) {
		dt = Float32
	}
	if dt == Uint8 || dt == Uint32 {
		if v < 0 {
			dt = Int32
		}
	}
	out := newArray(backendOf("scalar", a), dt, nil)
	out.backend.Full(out, v)
	return out
}

func scalarOp(op BinaryOp, a *Array, v float64, scalarFirst bool) *Array {
	s := scalarFor(a, v)
	defer s.Free()
	if scalarFirst {
		return binaryOp(op, s, a)
	}
	return binaryOp(op, a, s)
}

// AddScalar is a + v. In all scalar variants the scalar takes a's dtype
// like an MLX weak Python scalar (an integer array with a fractional
// scalar gives float32).
func AddScalar(a *Array, v float64) *Array { return scalarOp(OpAdd, a, v, false) }

// SubScalar is a - v.
func SubScalar(a *Array, v float64) *Array { return scalarOp(OpSub, a, v, false) }

// MulScalar is a * v.
func MulScalar(a *Array, v float64) *Array { return scalarOp(OpMul, a, v, false) }

// DivScalar is a / v.
func DivScalar(a *Array, v float64) *Array { return scalarOp(OpDiv, a, v, false) }

// PowScalar is a^v.
func PowScalar(a *Array, v float64) *Array { return scalarOp(OpPow, a, v, false) }

// MaximumScalar is max(a, v).
func MaximumScalar(a *Array, v float64) *Array { return scalarOp(OpMaximum, a, v, false) }

// MinimumScalar is min(a, v).
func MinimumScalar(a *Array, v float64) *Array { return scalarOp(OpMinimum, a, v, false) }

// ScalarSub is v - a.
func ScalarSub(v float64, a *Array) *Array { return scalarOp(OpSub, a, v, true) }

// ScalarDiv is v / a.
func ScalarDiv(v float64, a *Array) *Array { return scalarOp(OpDiv, a, v, true) }

// Where selects a where cond is true, else b; all three broadcast. cond may
// be any dtype (non-zero is true); the output dtype is the promotion of a
// and b.
func Where(cond, a, b *Array) *Array {
	be := backendOf("Where", cond, a, b)
	shape := mustBroadcast("Where", cond.shape, a.shape, b.shape)
	dt := PromoteTypes(a.dtype, b.dtype)
	cc := castTo(cond, Bool)
	ca, cbb := castTo(a, dt), castTo(b, dt)
	out := newArray(be, dt, shape)
	be.Where(cc, ca, cbb, out)
	for _, t := range [][2]*Array{{cc, cond}, {ca, a}, {cbb, b}} {
		if t[0] != t[1] {
			t[0].Free()
		}
	}
	return out
}

// Clip limits x to [lo, hi]; pass ±Inf to leave a side open.
func Clip(x *Array, lo, hi float64) *Array {
	be := backendOf("Clip", x)
	out := newArray(be, x.dtype, x.shape)
	be.Clip(x, lo, hi, out)
	return out
}

// AsType converts x to dtype dt. Float narrowing rounds to nearest even and
// keeps NaN/Inf; float to integer truncates toward zero; anything to bool is
// "non-zero".
func AsType(x *Array, dt DType) *Array {
	be := backendOf("AsType", x)
	out := newArray(be, dt, x.shape)
	be.AsType(x, out)
	return out
}

// Copy returns a new array with x's contents.
func Copy(x *Array) *Array { return AsType(x, x.DType()) }
