package mlx_test

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
)

var bcastCases = [][2][]int{
	{{}, {3}}, {{3}, {}}, {{}, {}}, {{1}, {5}}, {{17}, {17}}, {{2, 3}, {3}},
	{{2, 1, 4}, {3, 1}}, {{4, 1}, {1, 33}}, {{2, 3, 4}, {2, 3, 4}}, {{1, 1, 1}, {7}},
	{{3, 1, 5}, {1, 4, 1}}, {{5, 0}, {5, 1}}, {{2, 9, 1, 3}, {9, 5, 1}}, {{1000}, {1000}},
	{{300, 130}, {130}}, {{130, 1}, {130, 300}},
}

type binRef struct {
	name string
	f    func(a, b *mlx.Array) *mlx.Array
	ref  func(x, y float64) float64
	pos  bool // operands must be positive
}

var binRefs = []binRef{
	{"Add", mlx.Add, func(x, y float64) float64 { return x + y }, false},
	{"Sub", mlx.Sub, func(x, y float64) float64 { return x - y }, false},
	{"Mul", mlx.Mul, func(x, y float64) float64 { return x * y }, false},
	{"Div", mlx.Div, func(x, y float64) float64 { return x / y }, true},
	{"Maximum", mlx.Maximum, math.Max, false},
	{"Minimum", mlx.Minimum, math.Min, false},
	{"Pow", mlx.Pow, math.Pow, true},
	{"Remainder", mlx.Remainder, func(x, y float64) float64 {
		m := math.Mod(x, y)
		if m != 0 && (m < 0) != (y < 0) {
			m += y
		}
		return m
	}, false},
}

func TestBinaryBroadcastF32(t *testing.T) {
	leakFree(t)
	r := newRNG(10)
	for _, op := range binRefs {
		for _, c := range bcastCases {
			lo := -3.0
			if op.pos {
				lo = 0.5
			}
			as, bs := randSlice(r, size(c[0]), lo, 3), randSlice(r, size(c[1]), lo, 3)
			a, b := arr(as, c[0]...), arr(bs, c[1]...)
			out := op.f(a, b)
			oshape, _ := mlx.BroadcastShapes(c[0], c[1])
			want := make([]float64, size(oshape))
			for i := range want {
				idx := unravel(i, oshape)
				want[i] = float64(float32(op.ref(float64(as[bcFlat(idx, c[0])]), float64(bs[bcFlat(idx, c[1])]))))
			}
			name := fmt.Sprintf("%s%v%v", op.name, c[0], c[1])
			shapeEq(t, name, out, oshape...)
			tol := 1e-6
			if op.name == "Remainder" {
				tol = 1e-5
			}
			closeTo(t, name, out.Float32s(), want, tol, 1e-6)
			if out.DType() != mlx.Float32 {
				t.Fatalf("%s: dtype %v", name, out.DType())
			}
			mlx.Free(a, b, out)
		}
	}
}

func TestBinaryBadBroadcastPanics(t *testing.T) {
	leakFree(t)
	a, b := mlx.Zeros([]int{2, 3}, mlx.Float32), mlx.Zeros([]int{4}, mlx.Float32)
	defer mlx.Free(a, b)
	defer func() {
		msg := fmt.Sprint(recover())
		if msg == "<nil>" || !contains(msg, "Add") || !contains(msg, "[2 3]") {
			t.Fatalf("panic message %q should name the op and shapes", msg)
		}
	}()
	mlx.Add(a, b)
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestComparisons(t *testing.T) {
	leakFree(t)
	r := newRNG(11)
	cmps := []struct {
		name string
		f    func(a, b *mlx.Array) *mlx.Array
		ref  func(x, y float32) bool
	}{
		{"Equal", mlx.Equal, func(x, y float32) bool { return x == y }},
		{"NotEqual", mlx.NotEqual, func(x, y float32) bool { return x != y }},
		{"Less", mlx.Less, func(x, y float32) bool { return x < y }},
		{"LessEqual", mlx.LessEqual, func(x, y float32) bool { return x <= y }},
		{"Greater", mlx.Greater, func(x, y float32) bool { return x > y }},
		{"GreaterEqual", mlx.GreaterEqual, func(x, y float32) bool { return x >= y }},
	}
	for _, c := range cmps {
		as := randSlice(r, 6*7, -2, 2)
		bs := randSlice(r, 7, -2, 2)
		as[3] = bs[3] // equal elements exist
		a, b := mlx.FromSlice(as, 6, 7), mlx.FromSlice(bs, 7)
		out := c.f(a, b)
		if out.DType() != mlx.Bool {
			t.Fatalf("%s dtype %v", c.name, out.DType())
		}
		got := out.Bools()
		for i := range got {
			if got[i] != c.ref(as[i], bs[i%7]) {
				t.Fatalf("%s[%d] wrong", c.name, i)
			}
		}
		// integer comparisons too
		ai, bi := mlx.AsType(a, mlx.Int32), mlx.AsType(b, mlx.Int32)
		oi := c.f(ai, bi)
		gi := oi.Bools()
		for i := range gi {
			if gi[i] != c.ref(float32(int32(as[i])), float32(int32(bs[i%7]))) {
				t.Fatalf("%s int[%d] wrong", c.name, i)
			}
		}
		mlx.Free(a, b, out, ai, bi, oi)
	}
}

func TestPromotionAndIntegerOps(t *testing.T) {
	leakFree(t)
	cases := []struct{ a, b, want mlx.DType }{
		{mlx.Float16, mlx.Float32, mlx.Float32}, {mlx.Float16, mlx.BFloat16, mlx.Float32},
		{mlx.Int32, mlx.Float16, mlx.Float16}, {mlx.Uint8, mlx.Int32, mlx.Int32},
		{mlx.Bool, mlx.Uint8, mlx.Uint8}, {mlx.Uint8, mlx.Uint32, mlx.Uint32},
		{mlx.Bool, mlx.BFloat16, mlx.BFloat16}, {mlx.Uint32, mlx.Int32, mlx.Int32},
	}
	for _, c := range cases {
		if g := mlx.PromoteTypes(c.a, c.b); g != c.want {
			t.Fatalf("Promote(%v,%v)=%v want %v", c.a, c.b, g, c.want)
		}
		if g := mlx.PromoteTypes(c.b, c.a); g != c.want {
			t.Fatalf("Promote not symmetric for %v,%v", c.a, c.b)
		}
	}
	a := mlx.FromSlice([]int32{7, -7, 9, 2147483647}, 4)
	b := mlx.FromSlice([]int32{2, 2, -4, 1}, 4)
	add, div, rem, mx := mlx.Add(a, b), mlx.Div(a, b), mlx.Remainder(a, b), mlx.Maximum(a, b)
	defer mlx.Free(a, b, add, div, rem, mx)
	if fmt.Sprint(add.Int32s()) != "[9 -5 5 -2147483648]" || add.DType() != mlx.Int32 {
		t.Fatalf("int add %v (wraps like C)", add.Int32s())
	}
	if div.DType() != mlx.Float32 || fmt.Sprint(div.Float32s()) != "[3.5 -3.5 -2.25 2.1474836e+09]" {
		t.Fatalf("int div %v %v", div.DType(), div.Float32s())
	}
	if fmt.Sprint(rem.Int32s()) != "[1 1 -3 0]" {
		t.Fatalf("int remainder (Python sign rule) %v", rem.Int32s())
	}
	if fmt.Sprint(mx.Int32s()) != "[7 2 9 2147483647]" {
		t.Fatalf("int max %v", mx.Int32s())
	}
	u := mlx.FromSlice([]uint8{250, 3})
	u2 := mlx.AddScalar(u, 10)
	defer mlx.Free(u, u2)
	if u2.DType() != mlx.Uint8 || fmt.Sprint(u2.Uint8s()) != "[4 13]" {
		t.Fatalf("uint8 wrap %v %v", u2.DType(), u2.Uint8s())
	}
	bt := mlx.FromSlice([]bool{true, false, true})
	bf := mlx.FromSlice([]bool{true, true, false})
	ba, bo, bn := mlx.LogicalAnd(bt, bf), mlx.LogicalOr(bt, bf), mlx.LogicalNot(bt)
	bsum := mlx.Add(bt, bf)
	defer mlx.Free(bt, bf, ba, bo, bn, bsum)
	if fmt.Sprint(ba.Bools(), bo.Bools(), bn.Bools(), bsum.Bools()) != "[true false false] [true true true] [false true false] [true true true]" {
		t.Fatalf("logical ops wrong: %v %v %v %v", ba.Bools(), bo.Bools(), bn.Bools(), bsum.Bools())
	}
	// integer input to a float-only op becomes float32
	e := mlx.Exp(a)
	defer e.Free()
	if e.DType() != mlx.Float32 {
		t.Fatalf("Exp(int32) dtype %v", e.DType())
	}
	// scalar ops keep float dtypes (weak scalars)
	h := mlx.FromBits([]uint16{mlx.F32ToF16(1.5)}, mlx.Float16)
	h2 := mlx.MulScalar(h, 3)
	defer mlx.Free(h, h2)
	if h2.DType() != mlx.Float16 || h2.Item() != 4.5 {
		t.Fatalf("f16 * 3 = %v %v", h2.DType(), h2.Item())
	}
	i3 := mlx.MulScalar(a, 0.5)
	defer i3.Free()
	if i3.DType() != mlx.Float32 || i3.Float32s()[0] != 3.5 {
		t.Fatalf("int32 * 0.5 = %v %v", i3.DType(), i3.Float32s())
	}
}

// Half-precision binary ops must equal the correctly rounded result of the
// exact operation on the (half) inputs.
func TestBinaryHalfPrecision(t *testing.T) {
	leakFree(t)
	r := newRNG(12)
	for _, dt := range []mlx.DType{mlx.Float16, mlx.BFloat16} {
		round := f16Round
		if dt == mlx.BFloat16 {
			round = bf16Round
		}
		for _, op := range binRefs[:6] {
			n := 257
			as, bs := randSlice(r, n, 0.1, 50), randSlice(r, n, 0.1, 50)
			a32, b32 := mlx.FromSlice(as, n), mlx.FromSlice(bs, n)
			a, b := mlx.AsType(a32, dt), mlx.AsType(b32, dt)
			out := op.f(a, b)
			if out.DType() != dt {
				t.Fatalf("%v %s dtype %v", dt, op.name, out.DType())
			}
			want := make([]float64, n)
			for i := range want {
				want[i] = round(op.ref(round(float64(as[i])), round(float64(bs[i]))))
			}
			closeTo(t, dt.String()+" "+op.name, out.Float32s(), want, 0, 0)
			mlx.Free(a32, b32, a, b, out)
		}
	}
}

func TestUnaryOps(t *testing.T) {
	leakFree(t)
	r := newRNG(13)
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	ops := []struct {
		name   string
		f      func(*mlx.Array) *mlx.Array
		ref    func(float64) float64
		lo, hi float64
	}{
		{"Neg", mlx.Neg, func(x float64) float64 { return -x }, -5, 5},
		{"Abs", mlx.Abs, math.Abs, -5, 5},
		{"Square", mlx.Square, func(x float64) float64 { return x * x }, -5, 5},
		{"Sqrt", mlx.Sqrt, math.Sqrt, 0, 9},
		{"Rsqrt", mlx.Rsqrt, func(x float64) float64 { return 1 / math.Sqrt(x) }, 0.01, 9},
		{"Reciprocal", mlx.Reciprocal, func(x float64) float64 { return 1 / x }, 0.1, 9},
		{"Exp", mlx.Exp, math.Exp, -20, 20},
		{"Log", mlx.Log, math.Log, 0.001, 100},
		{"Log1p", mlx.Log1p, math.Log1p, -0.5, 100},
		{"Sin", mlx.Sin, math.Sin, -7, 7},
		{"Cos", mlx.Cos, math.Cos, -7, 7},
		{"Tanh", mlx.Tanh, math.Tanh, -6, 6},
		{"Erf", mlx.Erf, math.Erf, -4, 4},
		{"Sigmoid", mlx.Sigmoid, sig, -30, 30},
		{"Silu", mlx.Silu, func(x float64) float64 { return x * sig(x) }, -30, 30},
		{"Gelu", mlx.Gelu, func(x float64) float64 { return x * 0.5 * math.Erfc(-x/math.Sqrt2) }, -6, 6},
		{"GeluApprox", mlx.GeluApprox, func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(0.7978845608028654*(x+0.044715*math.Pow(x, 3))))
		}, -6, 6},
		{"GeluFast", mlx.GeluFast, func(x float64) float64 { return x * sig(1.702*x) }, -6, 6},
		{"Relu", mlx.Relu, func(x float64) float64 { return math.Max(x, 0) }, -5, 5},
		{"Floor", mlx.Floor, math.Floor, -5, 5},
		{"Ceil", mlx.Ceil, math.Ceil, -5, 5},
		{"Round", mlx.Round, math.RoundToEven, -5, 5},
	}
	for _, op := range ops {
		for _, n := range []int{1, 7, 16, 33, 5000} {
			xs := randSlice(r, n, op.lo, op.hi)
			if op.name == "Round" && n > 2 {
				xs[0], xs[1] = 2.5, -0.5 // ties go to even
			}
			x := mlx.FromSlice(xs, n)
			y := op.f(x)
			want := make([]float64, n)
			for i, v := range xs {
				want[i] = op.ref(float64(v))
			}
			atol := 1e-7
			if op.name == "Erf" || op.name == "Gelu" {
				atol = 5e-7 // MLX's float32 erf (the mlxc backend) errs by up to about 4e-7
			}
			closeTo(t, op.name, y.Float32s(), want, 1e-6, atol)
			// f16 input: computed in f32, rounded once
			xh := mlx.AsType(x, mlx.Float16)
			yh := op.f(xh)
			if yh.DType() != mlx.Float16 {
				t.Fatalf("%s f16 dtype %v", op.name, yh.DType())
			}
			hx := xh.Float32s()
			for i, v := range hx {
				want[i] = f16Round(op.ref(float64(v)))
			}
			closeTo(t, op.name+" f16", yh.Float32s(), want, 1e-3, 1e-4) // within 1 f16 ulp
			mlx.Free(x, y, xh, yh)
		}
	}
	// NaN handling
	x := mlx.FromSlice([]float32{float32(math.NaN()), float32(math.Inf(1)), 1})
	nan, inf := mlx.IsNaN(x), mlx.IsInf(x)
	defer mlx.Free(x, nan, inf)
	if fmt.Sprint(nan.Bools(), inf.Bools()) != "[true false false] [false true false]" {
		t.Fatalf("IsNaN/IsInf: %v %v", nan.Bools(), inf.Bools())
	}
}

func TestWhereClipAsType(t *testing.T) {
	leakFree(t)
	c := mlx.FromSlice([]bool{true, false, true}, 3, 1)
	a := mlx.FromSlice([]float32{1, 2, 3, 4}, 1, 4)
	b := mlx.Scalar(-1, mlx.Float32)
	w := mlx.Where(c, a, b)
	defer mlx.Free(c, a, b, w)
	shapeEq(t, "Where", w, 3, 4)
	if fmt.Sprint(w.Float32s()) != "[1 2 3 4 -1 -1 -1 -1 1 2 3 4]" {
		t.Fatalf("Where %v", w.Float32s())
	}
	x := mlx.FromSlice([]float32{-3, -0.5, 0, 0.5, 3, float32(math.NaN())})
	cl := mlx.Clip(x, -1, 1)
	lo := mlx.Clip(x, 0, math.Inf(1))
	defer mlx.Free(x, cl, lo)
	if fmt.Sprint(cl.Float32s()) != "[-1 -0.5 0 0.5 1 NaN]" || fmt.Sprint(lo.Float32s()) != "[0 0 0 0.5 3 NaN]" {
		t.Fatalf("Clip %v %v", cl.Float32s(), lo.Float32s())
	}
	// astype between every pair of dtypes on values all of them hold
	vals := []float32{0, 1, 2, 3, 100, 7, 1, 0}
	all := []mlx.DType{mlx.Bool, mlx.Uint8, mlx.Uint32, mlx.Int32, mlx.Float16, mlx.BFloat16, mlx.Float32}
	for _, from := range all {
		src0 := mlx.FromSlice(vals, 2, 4)
		src := mlx.AsType(src0, from)
		for _, to := range all {
			d := mlx.AsType(src, to)
			want := make([]float64, len(vals))
			for i, v := range vals {
				want[i] = float64(v)
				if from == mlx.Bool || to == mlx.Bool {
					want[i] = math.Min(want[i], 1)
				}
			}
			if d.DType() != to {
				t.Fatalf("AsType dtype %v want %v", d.DType(), to)
			}
			shapeEq(t, "AsType", d, 2, 4)
			closeTo(t, fmt.Sprintf("AsType %v->%v", from, to), d.Float32s(), want, 0, 0)
			d.Free()
		}
		mlx.Free(src0, src)
	}
	// float -> int truncates toward zero; NaN/Inf survive narrowing
	f := mlx.FromSlice([]float32{-2.7, 2.7, 65536, float32(math.NaN()), float32(math.Inf(-1))})
	fi, fh, fb := mlx.AsType(f, mlx.Int32), mlx.AsType(f, mlx.Float16), mlx.AsType(f, mlx.BFloat16)
	defer mlx.Free(f, fi, fh, fb)
	if g := fi.Int32s(); g[0] != -2 || g[1] != 2 || g[2] != 65536 {
		t.Fatalf("float->int %v", g)
	}
	if fmt.Sprint(fh.Float32s()) != "[-2.6992188 2.6992188 +Inf NaN -Inf]" {
		t.Fatalf("f32->f16 %v", fh.Float32s())
	}
	if fmt.Sprint(fb.Float32s()) != "[-2.703125 2.703125 65536 NaN -Inf]" {
		t.Fatalf("f32->bf16 %v", fb.Float32s())
	}
}
