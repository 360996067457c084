package nn

import (
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
)

// The recurrent cache owns its state across scopes, a snapshot is O(1) and
// unaffected by later steps, Restore returns to it (more than once), and
// it refuses to trim what it cannot drop.
func TestRecurrentCacheSnapshotRestore(t *testing.T) {
	mlxtest.NoLeaks(t)
	c := NewRecurrentCache()
	if c.Conv() != nil || c.State() != nil || c.Offset() != 0 {
		t.Fatal("a new cache holds a state")
	}
	step := func(v float32, n int) {
		s := mlx.NewScope()
		defer s.Close()
		c.Advance(mlx.Full([]int{1, 3, 2}, float64(v), mlx.Float32), mlx.Full([]int{1, 2, 2, 2}, float64(v), mlx.Float32), n)
	}
	read := func() (float32, float32) { return c.Conv().Float32s()[0], c.State().Float32s()[0] }
	step(1, 5)
	snap := c.Snapshot()
	step(2, 1)
	step(3, 1)
	if cv, st := read(); cv != 3 || st != 3 || c.Offset() != 7 {
		t.Fatalf("after steps: conv %v state %v offset %d", cv, st, c.Offset())
	}
	for i := 0; i < 2; i++ {
		if err := c.Restore(snap); err != nil {
			t.Fatal(err)
		}
		if cv, st := read(); cv != 1 || st != 1 || c.Offset() != 5 {
			t.Fatalf("restore %d: conv %v state %v offset %d", i, cv, st, c.Offset())
		}
		step(4, 1)
	}
	if !c.Trim(0) || c.Trim(1) || c.Offset() != 6 {
		t.Fatalf("trim: offset %d", c.Offset())
	}
	if err := c.Restore(NewKVCache().Snapshot()); err == nil {
		t.Fatal("restored a KV cache snapshot")
	}
	empty := NewRecurrentCache().Snapshot()
	if err := c.Restore(empty); err != nil || c.Conv() != nil || c.Offset() != 0 {
		t.Fatalf("restore of an empty snapshot: %v, offset %d", err, c.Offset())
	}
	step(5, 2)
	c.Reset()
	if c.State() != nil || c.Offset() != 0 {
		t.Fatal("reset kept the state")
	}
	step(6, 1)
	c.Free()
}
