package mlxc_test

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
)

var floats = []mlx.DType{mlx.Float32, mlx.Float16, mlx.BFloat16}

func TestParityData(t *testing.T) {
	needMLXC(t)
	for _, dt := range []mlx.DType{mlx.Float32, mlx.Float16, mlx.BFloat16, mlx.Int32, mlx.Uint32, mlx.Uint8, mlx.Bool} {
		parity(t, "FromBytes/"+dt.String(), 0, 0, func() *mlx.Array {
			raw := make([]byte, 12*dt.Size())
			r := rng(1)
			for i := range raw {
				raw[i] = byte(r.IntN(256))
			}
			if dt == mlx.Bool {
				for i := range raw {
					raw[i] &= 1
				}
			}
			if dt.IsFloat() { // keep NaN payloads out: Float64s canonicalises them
				for i := dt.Size() - 1; i < len(raw); i += dt.Size() {
					raw[i] &= 0x3f
				}
			}
			a, err := mlx.FromBytes(raw, dt, 3, 4)
			if err != nil {
				panic(err)
			}
			return a
		})
		parity(t, "Full/"+dt.String(), 0, 0, func() *mlx.Array { return mlx.Full([]int{2, 3}, 3.7, dt) })
		parity(t, "Arange/"+dt.String(), 0, 0, func() *mlx.Array { return mlx.Arange(1, 40, 3.3, dt) })
		for _, to := range []mlx.DType{mlx.Float32, mlx.Float16, mlx.BFloat16, mlx.Int32, mlx.Uint32, mlx.Uint8, mlx.Bool} {
			parity(t, fmt.Sprintf("AsType/%v-%v", dt, to), 0, 0, func() *mlx.Array {
				lo := -200.0
				if !dt.IsFloat() && dt != mlx.Int32 || to == mlx.Uint32 || to == mlx.Uint8 {
					lo = 0 // converting negatives to unsigned is undefined in C
				}
				a := rnd(2, mlx.Float32, lo, 250, 4, 5)
				x := mlx.AsType(a, dt)
				return mlx.AsType(x, to)
			})
		}
	}
	parity(t, "FromSlice/bool", 0, 0, func() *mlx.Array { return mlx.FromSlice([]bool{true, false, true}, 3) })
	parity(t, "FromSlice/uint8", 0, 0, func() *mlx.Array { return mlx.FromSlice([]uint8{0, 7, 255}, 3) })
	parity(t, "FromBits/f16", 0, 0, func() *mlx.Array { return mlx.FromBits([]uint16{0x3c00, 0xfbff, 0x0001, 0x7c00}, mlx.Float16, 4) })
	parity(t, "Empty", 0, 0, func() *mlx.Array { return mlx.Zeros([]int{0, 3}, mlx.Float32) })
	parity(t, "Scalar", 0, 0, func() *mlx.Array { return mlx.Scalar(2.5, mlx.Float32) })
	parity(t, "Reshape", 0, 0, func() *mlx.Array { return mlx.Reshape(rnd(3, mlx.Float32, -1, 1, 2, 6), 3, 4) })
}

func TestParityUnary(t *testing.T) {
	needMLXC(t)
	type u struct {
		name   string
		f      func(*mlx.Array) *mlx.Array
		lo, hi float64
	}
	ops := []u{
		{"Neg", mlx.Neg, -5, 5}, {"Abs", mlx.Abs, -5, 5}, {"Square", mlx.Square, -5, 5},
		{"Sqrt", mlx.Sqrt, 0, 9}, {"Rsqrt", mlx.Rsqrt, 0.1, 9}, {"Reciprocal", mlx.Reciprocal, 0.1, 9},
		{"Exp", mlx.Exp, -8, 8}, {"Log", mlx.Log, 0.01, 50}, {"Log1p", mlx.Log1p, -0.9, 5},
		{"Sin", mlx.Sin, -6, 6}, {"Cos", mlx.Cos, -6, 6}, {"Tanh", mlx.Tanh, -4, 4},
		{"Erf", mlx.Erf, -3, 3}, {"Sigmoid", mlx.Sigmoid, -9, 9}, {"Silu", mlx.Silu, -9, 9},
		{"Gelu", mlx.Gelu, -5, 5}, {"GeluApprox", mlx.GeluApprox, -5, 5}, {"GeluFast", mlx.GeluFast, -5, 5},
		{"Relu", mlx.Relu, -5, 5}, {"Floor", mlx.Floor, -5, 5}, {"Ceil", mlx.Ceil, -5, 5},
		{"Round", mlx.Round, -5, 5}, {"LogicalNot", mlx.LogicalNot, -1, 1}, {"IsNaN", mlx.IsNaN, -1, 1},
		{"IsInf", mlx.IsInf, -1, 1},
	}
	for _, op := range ops {
		for _, dt := range floats {
			rt, at := tol(dt)
			if dt == mlx.Float32 {
				rt, at = 4e-6, 1e-6 // MLX's float32 transcendentals are within a few ulp
			}
			parity(t, op.name+"/"+dt.String(), rt, at, func() *mlx.Array {
				x := rnd(10, dt, op.lo, op.hi, 7, 9)
				if op.name == "Round" { // exact halves: ties go to even
					h := mlx.FromSlice([]float32{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5}, 6)
					x = mlx.AsType(h, dt)
				}
				if op.name == "IsNaN" || op.name == "IsInf" || op.name == "LogicalNot" {
					s := mlx.FromSlice([]float32{0, 1, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -0.0}, 6)
					x = mlx.AsType(s, dt)
				}
				return op.f(x)
			})
		}
		for _, dt := range []mlx.DType{mlx.Int32, mlx.Uint32, mlx.Uint8, mlx.Bool} {
			lo, hi := int(op.lo), int(op.hi)
			if dt != mlx.Int32 || op.lo >= 0 {
				lo = max(lo, 0)
			}
			if lo == hi {
				hi = lo + 3
			}
			parity(t, op.name+"/"+dt.String(), 4e-6, 1e-6, func() *mlx.Array {
				return op.f(intsOf(11, dt, lo, hi+1, 5, 4))
			})
		}
	}
}

func TestParityBinary(t *testing.T) {
	needMLXC(t)
	ops := []struct {
		name string
		f    func(a, b *mlx.Array) *mlx.Array
	}{
		{"Add", mlx.Add}, {"Sub", mlx.Sub}, {"Mul", mlx.Mul}, {"Div", mlx.Div}, {"Maximum", mlx.Maximum},
		{"Minimum", mlx.Minimum}, {"Pow", mlx.Pow}, {"Remainder", mlx.Remainder}, {"Equal", mlx.Equal},
		{"NotEqual", mlx.NotEqual}, {"Less", mlx.Less}, {"LessEqual", mlx.LessEqual}, {"Greater", mlx.Greater},
		{"GreaterEqual", mlx.GreaterEqual}, {"LogicalAnd", mlx.LogicalAnd}, {"LogicalOr", mlx.LogicalOr},
	}
	for _, op := range ops {
		for _, dt := range floats {
			rt, at := tol(dt)
			parity(t, op.name+"/"+dt.String(), rt, at, func() *mlx.Array {
				a := rnd(20, dt, 0.5, 4, 3, 1, 5)
				b := rnd(21, dt, -3, 3, 4, 1)
				if op.name == "Pow" || op.name == "Remainder" || op.name == "Div" {
					b = rnd(21, dt, 0.5, 3, 4, 1)
				}
				// op(a, a): equal elements for the comparisons
				return mlx.Concatenate([]*mlx.Array{op.f(a, b), op.f(a, a)}, 1)
			})
		}
		for _, dt := range []mlx.DType{mlx.Int32, mlx.Uint32, mlx.Uint8, mlx.Bool} {
			parity(t, op.name+"/"+dt.String(), 4e-6, 0, func() *mlx.Array {
				lo := -6
				if dt != mlx.Int32 {
					lo = 0
				}
				a := intsOf(22, dt, lo, 7, 4, 6)
				b := intsOf(23, dt, 1, 5, 6)
				return op.f(a, b)
			})
		}
	}
	parity(t, "Remainder/negative", 0, 0, func() *mlx.Array {
		a := mlx.FromSlice([]float32{-7, 7, -7, 7, 5.5, -5.5}, 6)
		b := mlx.FromSlice([]float32{3, -3, -3, 3, 2, 2}, 6)
		return mlx.Remainder(a, b)
	})
	parity(t, "MaximumNaN", 0, 0, func() *mlx.Array {
		a := mlx.FromSlice([]float32{float32(math.NaN()), 1, 2}, 3)
		b := mlx.FromSlice([]float32{0, float32(math.NaN()), 1}, 3)
		return mlx.Maximum(a, b)
	})
	parity(t, "Int32Wrap", 0, 0, func() *mlx.Array {
		a := mlx.FromSlice([]int32{math.MaxInt32, math.MinInt32}, 2)
		b := mlx.FromSlice([]int32{1, -1}, 2)
		return mlx.Add(a, b)
	})
	for _, dt := range floats {
		rt, at := tol(dt)
		parity(t, "Scalars/"+dt.String(), rt, at, func() *mlx.Array {
			x := rnd(24, dt, 1, 3, 5)
			return mlx.ScalarDiv(2, mlx.SubScalar(mlx.MulScalar(mlx.AddScalar(x, 0.25), 3), 1))
		})
	}
	parity(t, "Where", 0, 0, func() *mlx.Array {
		c := mlx.Greater(rnd(25, mlx.Float32, -1, 1, 3, 4), mlx.Scalar(0, mlx.Float32))
		return mlx.Where(c, rnd(26, mlx.Float16, -1, 1, 4), rnd(27, mlx.Float16, -1, 1, 3, 1))
	})
	for _, dt := range []mlx.DType{mlx.Float32, mlx.Float16, mlx.Int32, mlx.Uint8} {
		parity(t, "Clip/"+dt.String(), 0, 0, func() *mlx.Array {
			x := intsOf(28, dt, 0, 200, 30)
			if dt == mlx.Int32 {
				x = intsOf(28, dt, -100, 100, 30)
			}
			a := mlx.Clip(x, 2.5, 150.5)
			hi := -2.5
			if dt == mlx.Uint8 {
				hi = 20.5 // a negative bound has no uint8 value
			}
			b := mlx.Clip(x, math.Inf(-1), hi)
			c := mlx.Clip(x, 10, math.Inf(1))
			return mlx.Concatenate([]*mlx.Array{a, b, c}, 0)
		})
	}
}

func TestParityShape(t *testing.T) {
	needMLXC(t)
	x := func() *mlx.Array { return rnd(30, mlx.Float32, -1, 1, 2, 3, 4) }
	parity(t, "Transpose", 0, 0, func() *mlx.Array { return mlx.Transpose(x(), 2, 0, 1) })
	parity(t, "BroadcastTo", 0, 0, func() *mlx.Array { return mlx.BroadcastTo(rnd(31, mlx.Float16, -1, 1, 3, 1), 2, 3, 5) })
	parity(t, "Slice", 0, 0, func() *mlx.Array { return mlx.Slice(x(), []int{1, 0, 1}, []int{2, 3, 4}, []int{1, 2, 2}) })
	parity(t, "SliceNegative", 0, 0, func() *mlx.Array {
		return mlx.Slice(x(), []int{1, 2, 3}, []int{-3, -4, 0}, []int{-1, -1, -2})
	})
	parity(t, "SliceOfTranspose", 0, 0, func() *mlx.Array {
		return mlx.Slice(mlx.Transpose(x(), 2, 1, 0), []int{1, 1}, []int{3, 3}, nil)
	})
	parity(t, "SliceUpdate", 0, 0, func() *mlx.Array {
		return mlx.SliceUpdate(x(), mlx.Full([]int{1, 2, 2}, 9, mlx.Float32), []int{1, 1, 0}, []int{2, 3, 4}, []int{1, 1, 2})
	})
	parity(t, "SliceAssign", 0, 0, func() *mlx.Array {
		d := x()
		before := mlx.Reshape(d, 24) // a view taken earlier keeps the old data
		mlx.SliceAssign(d, mlx.Full([]int{2, 1, 4}, 7, mlx.Float32), []int{0, 2, 0}, []int{2, 3, 4}, nil)
		mlx.SliceAssign(d, mlx.Full([]int{1, 3, 1}, -7, mlx.Float32), []int{1, 0, 3}, []int{2, 3, 4}, nil)
		return mlx.Concatenate([]*mlx.Array{before, mlx.Reshape(d, 24)}, 0)
	})
	parity(t, "SliceAssignInt", 0, 0, func() *mlx.Array {
		d := mlx.Zeros([]int{4, 3}, mlx.Int32)
		mlx.SliceAssign(d, mlx.Full([]int{2, 3}, 5, mlx.Int32), []int{1, 0}, []int{4, 3}, []int{2, 1})
		return d
	})
	parity(t, "Concatenate", 0, 0, func() *mlx.Array {
		return mlx.Concatenate([]*mlx.Array{x(), rnd(32, mlx.Float32, -1, 1, 2, 1, 4), rnd(33, mlx.Float32, -1, 1, 2, 2, 4)}, 1)
	})
	for _, dt := range []mlx.DType{mlx.Float32, mlx.BFloat16, mlx.Int32, mlx.Bool} {
		parity(t, "Pad/"+dt.String(), 0, 0, func() *mlx.Array {
			return mlx.Pad(mlx.AsType(x(), dt), []int{1, 0, 2}, []int{0, 2, 1}, 3)
		})
	}
	parity(t, "Take", 0, 0, func() *mlx.Array {
		return mlx.Take(x(), mlx.FromSlice([]int32{3, 0, 0, 2, 1, 3}, 2, 3), 2)
	})
	parity(t, "TakeUint32", 0, 0, func() *mlx.Array {
		return mlx.Take(rnd(34, mlx.Float16, -1, 1, 10, 4), mlx.FromSlice([]uint32{9, 0, 4}, 3), 0)
	})
	parity(t, "TakeAlongAxis", 0, 0, func() *mlx.Array {
		return mlx.TakeAlongAxis(x(), mlx.FromSlice([]int32{2, 0, 1, 1, 0, 2, 2, 2}, 2, 1, 4), 1)
	})
	parity(t, "Stack", 0, 0, func() *mlx.Array { return mlx.Stack([]*mlx.Array{x(), x()}, 1) })
}

func TestParityReduce(t *testing.T) {
	needMLXC(t)
	type r struct {
		name string
		f    func(x *mlx.Array) *mlx.Array
	}
	ops := []r{
		{"Sum", func(x *mlx.Array) *mlx.Array { return mlx.Sum(x, false, 1) }},
		{"SumAll", func(x *mlx.Array) *mlx.Array { return mlx.Sum(x, false) }},
		{"SumKeep", func(x *mlx.Array) *mlx.Array { return mlx.Sum(x, true, 0, 2) }},
		{"Max", func(x *mlx.Array) *mlx.Array { return mlx.Max(x, false, 2) }},
		{"Min", func(x *mlx.Array) *mlx.Array { return mlx.Min(x, true, 0) }},
		{"Prod", func(x *mlx.Array) *mlx.Array { return mlx.Prod(x, false, 2) }},
		{"All", func(x *mlx.Array) *mlx.Array { return mlx.All(x, false, 1) }},
		{"Any", func(x *mlx.Array) *mlx.Array { return mlx.Any(x, false, 1, 2) }},
		{"Mean", func(x *mlx.Array) *mlx.Array { return mlx.Mean(x, false, 2) }},
		{"Var", func(x *mlx.Array) *mlx.Array { return mlx.Var(x, false, 1, 2) }},
		{"ArgMax", func(x *mlx.Array) *mlx.Array { return mlx.ArgMax(x, 2, false) }},
		{"ArgMinKeep", func(x *mlx.Array) *mlx.Array { return mlx.ArgMin(x, 1, true) }},
		{"Cumsum", func(x *mlx.Array) *mlx.Array { return mlx.Cumsum(x, 2, false, true) }},
		{"CumsumRevExcl", func(x *mlx.Array) *mlx.Array { return mlx.Cumsum(x, 1, true, false) }},
		{"Sort", func(x *mlx.Array) *mlx.Array { return mlx.Sort(x, 2) }},
		{"ArgSort", func(x *mlx.Array) *mlx.Array { return mlx.ArgSort(x, 1) }},
		{"TopK", func(x *mlx.Array) *mlx.Array { return mlx.TopK(x, 3, 2) }},
		{"ArgTopK", func(x *mlx.Array) *mlx.Array { return mlx.ArgTopK(x, 2, 1) }},
		{"LogSumExp", func(x *mlx.Array) *mlx.Array { return mlx.LogSumExp(mlx.AsType(x, mlx.Float32), 1, false) }},
	}
	for _, op := range ops {
		for _, dt := range []mlx.DType{mlx.Float32, mlx.Float16, mlx.BFloat16, mlx.Int32, mlx.Uint32, mlx.Uint8, mlx.Bool} {
			rt, at := tol(dt)
			if !dt.IsFloat() {
				rt, at = 4e-6, 1e-6
			}
			parity(t, op.name+"/"+dt.String(), rt, at, func() *mlx.Array {
				// small integers: ties for the arg ops and sorts, exact sums
				var x *mlx.Array
				if dt.IsFloat() {
					x = rnd(40, dt, -2, 2, 3, 4, 6)
				} else {
					x = intsOf(41, dt, 0, 4, 3, 4, 6)
				}
				return op.f(x)
			})
		}
	}
	parity(t, "ArgMaxVocab", 0, 0, func() *mlx.Array { return mlx.ArgMax(rnd(42, mlx.Float32, -9, 9, 2, 32000), 1, false) })
	parity(t, "TopKNaN", 0, 0, func() *mlx.Array {
		return mlx.ArgTopK(mlx.FromSlice([]float32{1, float32(math.NaN()), 3, 3, -1}, 5), 3, 0)
	})
}

func TestParityLinalg(t *testing.T) {
	needMLXC(t)
	for _, dt := range floats {
		rt, at := tol(dt)
		rt, at = rt*4, at*10
		parity(t, "Matmul/"+dt.String(), rt, 1e-5+at, func() *mlx.Array {
			return mlx.Matmul(rnd(50, dt, -1, 1, 2, 5, 16), rnd(51, dt, -1, 1, 16, 7))
		})
		parity(t, "MatmulT/"+dt.String(), rt, 1e-5+at, func() *mlx.Array {
			return mlx.MatmulT(rnd(52, dt, -1, 1, 3, 64), rnd(53, dt, -1, 1, 9, 64))
		})
		parity(t, "MatmulBatchBroadcast/"+dt.String(), rt, 1e-5+at, func() *mlx.Array {
			return mlx.Matmul(rnd(54, dt, -1, 1, 2, 1, 3, 8), rnd(55, dt, -1, 1, 4, 8, 5))
		})
		parity(t, "MatmulVec/"+dt.String(), rt, 1e-5+at, func() *mlx.Array {
			return mlx.Matmul(rnd(56, dt, -1, 1, 8), rnd(57, dt, -1, 1, 8, 3))
		})
		parity(t, "Linear/"+dt.String(), rt, 1e-5+at, func() *mlx.Array {
			return mlx.Linear(rnd(58, dt, -1, 1, 4, 32), rnd(59, dt, -1, 1, 6, 32), rnd(60, dt, -1, 1, 6))
		})
	}
	parity(t, "MatmulMixed", 1e-5, 1e-5, func() *mlx.Array {
		return mlx.MatmulT(rnd(61, mlx.Float32, -1, 1, 3, 32), rnd(62, mlx.BFloat16, -1, 1, 5, 32))
	})
}
