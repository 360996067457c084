package nn

import (
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
)

// seq returns [1, 1, n, 1] holding from, from+1, ...
func seq(from, n int) *mlx.Array {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(from + i)
	}
	return mlx.FromSlice(v, 1, 1, n, 1)
}

// The storage is detached from the model's scopes, written in place, and
// released by Free; a snapshot is unaffected by later writes.
func TestKVCacheStorageOutlivesScopes(t *testing.T) {
	mlxtest.NoLeaks(t)
	base := mlx.DetachedArrays()
	c := NewKVCache()
	for i := range 5 {
		func() {
			s := mlx.NewScope()
			defer s.Close()
			c.Update(seq(i*2, 2), seq(100+i*2, 2))
		}()
	}
	snap := c.Snapshot()
	func() {
		s := mlx.NewScope()
		defer s.Close()
		c.Trim(4)
		k, _ := c.Update(seq(50, 1), seq(60, 1))
		if got := k.Float32s(); len(got) != 7 || got[5] != 5 || got[6] != 50 {
			t.Fatalf("after trim and update: %v", got)
		}
	}()
	if err := c.Restore(snap); err != nil {
		t.Fatal(err)
	}
	func() {
		s := mlx.NewScope()
		defer s.Close()
		_, v := c.Update(seq(10, 1), seq(110, 1))
		got := v.Float32s()
		for i, x := range got {
			if x != float32(100+i) {
				t.Fatalf("values after restore: %v", got)
			}
		}
	}()
	c.Free()
	if n := mlx.DetachedArrays() - base; n != 2 { // the snapshot's pair
		t.Fatalf("%d detached arrays alive, want the snapshot's 2", n)
	}
}

// A rotating cache drops old positions in bulk yet always returns the last
// Window-1 positions before the new ones.
func TestRotatingCacheWindow(t *testing.T) {
	mlxtest.NoLeaks(t)
	c := NewRotatingCache(4)
	defer c.Free()
	for i := range 40 {
		s := mlx.NewScope()
		k, _ := c.Update(seq(i, 1), seq(i, 1))
		got := k.Float32s()
		if len(got) < min(i+1, 4) || got[len(got)-1] != float32(i) {
			t.Fatalf("step %d: %v", i, got)
		}
		for j := 1; j < len(got); j++ {
			if got[j] != got[j-1]+1 {
				t.Fatalf("step %d: not consecutive: %v", i, got)
			}
		}
		s.Close()
	}
	if c.Offset() != 40 || !c.Trim(2) || c.Offset() != 38 {
		t.Fatalf("offset %d after trim", c.Offset())
	}
}

// Two goroutines (a chat and a transcription, say) decode with their own
// caches at once: each one's scopes must leave the other's arrays and
// cache storage alone.
func TestCachesOnConcurrentGoroutines(t *testing.T) {
	mlxtest.NoLeaks(t)
	errs := make(chan string, 2)
	done := make(chan struct{})
	for w := range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			c := NewKVCache()
			defer c.Free()
			for i := range 200 {
				s := mlx.NewScope()
				base := w*1000 + i
				k, v := c.Update(seq(base, 1), seq(-base, 1))
				q := mlx.Ones([]int{1, 1, 1, 1}, mlx.Float32)
				o := mlx.ScaledDotProductAttention(q, k, v, 1, mlx.CausalMask())
				kd := k.Float32s()
				_ = o.Float32s()
				s.Close()
				if len(kd) != i+1 || kd[0] != float32(w*1000) || kd[i] != float32(base) {
					errs <- "cache contents overwritten"
					return
				}
			}
		}()
	}
	<-done
	<-done
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
