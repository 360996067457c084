package mlx_test

import (
	"strings"
	"testing"

	"hark/mlx"
)

func TestScopeFreesAllButKept(t *testing.T) {
	leakFree(t)
	x := mlx.FromSlice([]float32{1, 2, 3})
	defer x.Free()
	var tmp, kept *mlx.Array
	func() {
		s := mlx.NewScope()
		defer s.Close()
		tmp = mlx.Exp(x)
		y := mlx.Add(tmp, x)
		kept = s.Keep(mlx.Mul(y, y))
	}()
	if !tmp.Freed() || kept.Freed() || x.Freed() {
		t.Fatalf("scope freed the wrong arrays: tmp %v kept %v x %v", tmp.Freed(), kept.Freed(), x.Freed())
	}
	if got := mlx.LiveArrays(); got != 2 {
		t.Fatalf("live arrays %d, want 2 (x and kept)", got)
	}
	kept.Free()
}

// FreeOwned frees what the scope owns (made in it, or kept into it from
// an inner scope) at once, and leaves arrays of other scopes and of none.
func TestScopeFreeOwned(t *testing.T) {
	leakFree(t)
	x := mlx.FromSlice([]float32{1, 2, 3})
	defer x.Free()
	outer := mlx.NewScope()
	theirs := mlx.Exp(x)
	s := mlx.NewScope()
	mine := mlx.Add(x, x)
	inner := mlx.NewScope()
	kept := inner.Keep(mlx.Mul(x, x))
	inner.Close()
	for _, a := range []*mlx.Array{theirs, x, nil} {
		s.FreeOwned(a)
	}
	if theirs.Freed() || x.Freed() {
		t.Fatalf("FreeOwned freed arrays the scope does not own: outer's %v, unscoped %v", theirs.Freed(), x.Freed())
	}
	s.FreeOwned(mine)
	s.FreeOwned(kept)
	if !mine.Freed() || !kept.Freed() {
		t.Fatalf("FreeOwned left the scope's arrays: made in it %v, kept into it %v", mine.Freed(), kept.Freed())
	}
	s.Close() // nothing left to free twice
	outer.Close()
	if !theirs.Freed() {
		t.Fatal("the outer scope did not free its array")
	}
}

func TestNestedScopesAndScoped(t *testing.T) {
	leakFree(t)
	outer := mlx.NewScope()
	a := mlx.Ones([]int{2}, mlx.Float32)
	var inner *mlx.Array
	func() {
		s := mlx.NewScope()
		defer s.Close()
		b := mlx.AddScalar(a, 1)
		b.Free() // explicit frees inside a scope are fine
		inner = s.Keep(mlx.MulScalar(a, 3))
	}()
	if inner.Freed() {
		t.Fatal("kept array freed by its own scope")
	}
	outer.Close() // the kept array moved to the outer scope
	if !inner.Freed() || !a.Freed() {
		t.Fatal("outer scope did not free its arrays")
	}
	res := mlx.Scoped(func() []*mlx.Array {
		z := mlx.Zeros([]int{3}, mlx.Float32)
		return []*mlx.Array{mlx.AddScalar(z, 2)}
	})
	if mlx.LiveArrays() != 1 || res[0].Float32s()[0] != 2 {
		t.Fatalf("Scoped kept %d arrays", mlx.LiveArrays())
	}
	mlx.Free(res...)
	// closing an outer scope also closes a forgotten inner one
	o2 := mlx.NewScope()
	mlx.NewScope()
	mlx.Zeros([]int{1}, mlx.Float32)
	o2.Close()
	o2.Close() // idempotent
}

func TestFreeSemantics(t *testing.T) {
	leakFree(t)
	x := mlx.FromSlice([]float32{1, 2})
	v := mlx.Reshape(x, 2, 1)
	x.Free()
	x.Free() // double free is a no-op
	if v.Float32s()[1] != 2 {
		t.Fatal("view lost its data when the source was freed")
	}
	v.Free()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "freed") {
			t.Fatalf("using a freed array should panic clearly, got %v", r)
		}
	}()
	x.Float32s()
}

func TestBackendSelection(t *testing.T) {
	leakFree(t)
	prev := mlx.DefaultBackend().Name()
	t.Cleanup(func() { _ = mlx.SetBackend(prev) }) // HARK_BACKEND=mlxc runs go on on mlxc
	if err := mlx.SetBackend("cpu"); err != nil {
		t.Fatal(err)
	}
	err := mlx.SetBackend("tpu")
	if err == nil || !strings.Contains(err.Error(), "tpu") || !strings.Contains(err.Error(), "cpu") {
		t.Fatalf("unknown backend error should name it and list the available ones: %v", err)
	}
	t.Setenv("HARK_BACKEND", "nope")
	if _, err := mlx.Select("", ""); err == nil || !strings.Contains(err.Error(), "HARK_BACKEND") {
		t.Fatalf("bad HARK_BACKEND should be an error naming the variable: %v", err)
	}
	if mlx.DefaultBackend().Name() != "cpu" {
		t.Fatal("failed SetBackend changed the backend")
	}
	x := mlx.Zeros([]int{1}, mlx.Float32)
	defer x.Free()
	if x.Backend().Name() != "cpu" {
		t.Fatal("array backend")
	}
	if err := mlx.Eval(x); err != nil {
		t.Fatal(err)
	}
}
