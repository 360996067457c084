package mlx_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"hark/mlx"
	_ "hark/mlx/backends"
	"hark/mlx/mlxtest"
)

// leakFree is the first line of every test: zero live arrays before and after.
func leakFree(t testing.TB) { t.Helper(); mlxtest.NoLeaks(t) }

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

func randSlice(r *rand.Rand, n int, lo, hi float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(lo + (hi-lo)*r.Float64())
	}
	return s
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func strides(shape []int) []int {
	st := make([]int, len(shape))
	n := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = n
		n *= shape[i]
	}
	return st
}

// unravel turns a flat row-major index into a multi-index.
func unravel(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = i % shape[d]
			i /= shape[d]
		}
	}
	return idx
}

// bcFlat maps an output multi-index to the flat index of an input of shape
// s under numpy broadcasting (right-aligned, size-1 dims repeat).
func bcFlat(idx []int, s []int) int {
	off := len(idx) - len(s)
	f := 0
	st := strides(s)
	for i, d := range s {
		if d != 1 {
			f += idx[off+i] * st[i]
		}
	}
	return f
}

func f64s(f []float32) []float64 {
	r := make([]float64, len(f))
	for i, v := range f {
		r[i] = float64(v)
	}
	return r
}

// closeTo reports the first element where |got-want| > atol + rtol*|want|.
func closeTo(t testing.TB, what string, got []float32, want []float64, rtol, atol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := float64(got[i]), want[i]
		if math.IsNaN(w) {
			if !math.IsNaN(g) {
				t.Fatalf("%s[%d]: got %v, want NaN", what, i, g)
			}
			continue
		}
		if math.IsInf(w, 0) {
			if g != w {
				t.Fatalf("%s[%d]: got %v, want %v", what, i, g, w)
			}
			continue
		}
		if math.Abs(g-w) > atol+rtol*math.Abs(w) {
			t.Fatalf("%s[%d]: got %.9g, want %.9g (diff %.3g)", what, i, g, w, math.Abs(g-w))
		}
	}
}

func shapeEq(t testing.TB, what string, a *mlx.Array, want ...int) {
	t.Helper()
	got := a.Shape()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: shape %v, want %v", what, got, want)
	}
}

// f16Round rounds to the nearest float16 through the package conversion
// (verified exhaustively in f16_test.go) for building half-precision
// references.
func f16Round(v float64) float64 { return float64(mlx.F16ToF32(mlx.F32ToF16(float32(v)))) }
func bf16Round(v float64) float64 {
	return float64(mlx.BF16ToF32(mlx.F32ToBF16(float32(v))))
}

// arr builds an array of exactly the given shape (including 0-d, which
// FromSlice cannot express since no shape means 1-D).
func arr[T mlx.Element](data []T, shape ...int) *mlx.Array {
	if len(shape) == 0 {
		a := mlx.FromSlice(data, 1)
		defer a.Free()
		return mlx.Reshape(a)
	}
	return mlx.FromSlice(data, shape...)
}
