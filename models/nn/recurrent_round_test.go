package nn

import (
	"strings"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
)

// A recurrent state in a speculative round: rolling back the whole round
// returns to its start (more than once in a round), a partial rollback is
// refused naming what it can do, Rollback(0) keeps the state, Commit keeps
// it and frees the round's record, and the cache says it rolls back only
// whole rounds while attention caches do not.
func TestRecurrentCacheRound(t *testing.T) {
	mlxtest.NoLeaks(t)
	c := NewRecurrentCache()
	step := func(v float32, n int) {
		s := mlx.NewScope()
		defer s.Close()
		c.Advance(mlx.Full([]int{1, 3, 2}, float64(v), mlx.Float32), mlx.Full([]int{1, 2, 2, 2}, float64(v), mlx.Float32), n)
	}
	read := func() (float32, float32) { return c.Conv().Float32s()[0], c.State().Float32s()[0] }
	var r Rounder = c
	if err := r.Rollback(1); err == nil {
		t.Fatal("rolled back outside a round")
	}
	step(1, 4)
	r.BeginRound()
	step(2, 3)
	if err := r.Rollback(2); err == nil || !strings.Contains(err.Error(), "only all of them") {
		t.Fatalf("partial rollback: %v", err)
	}
	if err := r.Rollback(0); err != nil || c.Offset() != 7 {
		t.Fatalf("rollback 0: %v, offset %d", err, c.Offset())
	}
	for i := range 2 {
		if err := r.Rollback(3); err != nil {
			t.Fatal(err)
		}
		if cv, st := read(); cv != 1 || st != 1 || c.Offset() != 4 {
			t.Fatalf("rollback %d: conv %v state %v offset %d", i, cv, st, c.Offset())
		}
		step(3, 3)
	}
	r.Commit()
	if cv, _ := read(); cv != 3 || c.Offset() != 7 {
		t.Fatalf("commit: conv %v offset %d", cv, c.Offset())
	}
	if err := r.Rollback(3); err == nil {
		t.Fatal("rolled back after commit")
	}
	// A round on an empty cache rolls back to empty.
	e := NewRecurrentCache()
	e.BeginRound()
	func() {
		s := mlx.NewScope()
		defer s.Close()
		e.Advance(mlx.Full([]int{1, 3, 2}, 1, mlx.Float32), mlx.Full([]int{1, 2, 2, 2}, 1, mlx.Float32), 2)
	}()
	if err := e.Rollback(2); err != nil || e.Conv() != nil || e.Offset() != 0 {
		t.Fatalf("empty round: %v, offset %d", err, e.Offset())
	}
	r.BeginRound() // freed by Free with the state
	if !WholeRounds([]Rounder{NewKVCache(), c}) || WholeRounds([]Rounder{NewKVCache(), NewRotatingCache(4)}) {
		t.Fatal("WholeRounds")
	}
	c.Free()
	e.Free()
}
