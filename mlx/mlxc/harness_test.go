package mlxc_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxc"
)

// needMLXC skips when no libmlxc is configured (CI's case) and fails when
// one is configured but does not open: a broken setup must not pass.
func needMLXC(t testing.TB) *mlxc.Backend {
	t.Helper()
	if os.Getenv(mlxc.EnvLibrary) == "" {
		t.Skip("HARK_MLXC is not set: the mlxc backend tests need libmlxc (on a Mac, brew's mlx-c; on Linux, built per ../shared/notes/mlx-on-linux.md); set HARK_MLXC=/path/to/libmlxc")
	}
	b, err := mlxc.Open()
	if err != nil {
		t.Fatalf("HARK_MLXC is set but the backend does not open: %v", err)
	}
	return b
}

type result struct {
	shape []int
	dt    mlx.DType
	vals  []float64
	err   string
}

// on runs build with name as the current backend and reads its result
// back; every array it makes is freed.
func on(t testing.TB, name string, build func() *mlx.Array) (res result) {
	t.Helper()
	prev := mlx.CurrentBackend()
	if err := mlx.SetBackend(name); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if prev != nil {
			_ = mlx.SetBackend(prev.Name())
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			res.err = fmt.Sprint(r)
		}
	}()
	s := mlx.NewScope()
	defer s.Close()
	r := build()
	if err := mlx.Eval(r); err != nil {
		return result{err: err.Error()}
	}
	return result{shape: r.Shape(), dt: r.DType(), vals: r.Float64s()}
}

// parity runs build on the cpu and mlxc backends and compares shape,
// dtype and values: |mlxc-cpu| <= atol + rtol*|cpu|, NaN and ±Inf equal.
func parity(t *testing.T, name string, rtol, atol float64, build func() *mlx.Array) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Helper()
		want := on(t, "cpu", build)
		got := on(t, mlxc.Name, build)
		if want.err != "" {
			t.Fatalf("cpu failed: %s", want.err)
		}
		if got.err != "" {
			t.Fatalf("mlxc failed: %s", got.err)
		}
		if !slices.Equal(got.shape, want.shape) || got.dt != want.dt {
			t.Fatalf("mlxc gives %v %v, cpu %v %v", got.shape, got.dt, want.shape, want.dt)
		}
		bad := 0
		for i, w := range want.vals {
			g := got.vals[i]
			ok := g == w || (math.IsNaN(g) && math.IsNaN(w)) ||
				(!math.IsInf(w, 0) && math.Abs(g-w) <= atol+rtol*math.Abs(w))
			if !ok {
				if bad < 5 {
					t.Errorf("[%d] (of %v): mlxc %.9g, cpu %.9g (diff %.3g)", i, want.shape, g, w, math.Abs(g-w))
				}
				bad++
			}
		}
		if bad > 0 {
			t.Fatalf("%d of %d values differ", bad, len(want.vals))
		}
	})
}

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

func uniform(seed uint64, n int, lo, hi float64) []float32 {
	r := rng(seed)
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

// rnd is a float array of shape with values in [lo, hi) in dtype dt.
func rnd(seed uint64, dt mlx.DType, lo, hi float64, shape ...int) *mlx.Array {
	a := mlx.FromSlice(uniform(seed, size(shape), lo, hi), shape...)
	if dt == mlx.Float32 {
		return a
	}
	defer a.Free()
	return mlx.AsType(a, dt)
}

// ints is an int32 array of values in [lo, hi) converted to dt.
func intsOf(seed uint64, dt mlx.DType, lo, hi int, shape ...int) *mlx.Array {
	r := rng(seed)
	s := make([]int32, size(shape))
	for i := range s {
		s[i] = int32(lo + r.IntN(hi-lo))
	}
	a := mlx.FromSlice(s, shape...)
	if dt == mlx.Int32 {
		return a
	}
	defer a.Free()
	return mlx.AsType(a, dt)
}

// tol is the tolerance for results in dt: a few units in the last place.
func tol(dt mlx.DType) (rtol, atol float64) {
	switch dt {
	case mlx.Float16:
		return 2e-3, 1e-4
	case mlx.BFloat16:
		return 1.6e-2, 1e-3
	}
	return 2e-6, 1e-7
}
