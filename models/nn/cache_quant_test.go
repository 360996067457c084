package nn

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
)

func randn(r *rand.Rand, shape ...int) *mlx.Array {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return mlx.FromSlice(v, shape...)
}

func diffOf(t *testing.T, a, b *mlx.Array) float64 {
	t.Helper()
	if a.Size() != b.Size() {
		t.Fatalf("sizes %v vs %v", a.Shape(), b.Shape())
	}
	return maxAbsDiff(a, b)
}

// Attention over the codes equals attention over the dequantized cache
// (the same numbers, read another way), for every layout, prefill and
// decode, GQA and a sliding window; the dequantized keys are within the
// quantization step of the originals.
func TestQuantizedCacheAttendEqualsDequantized(t *testing.T) {
	mlxtest.NoLeaks(t)
	// The same numbers read another way, so the backend's rounding of q
	// for integer dot products (held to its own derived bound in the
	// backend's tests) is off here.
	defer mlx.ExactQuantizedKV()()
	for _, tc := range []struct {
		name             string
		hq, hkv, d, bits int
		group, window    int
		softcap          float32
	}{
		{"per-head 8-bit", 4, 2, 64, 8, 64, 0, 0},
		{"per-head 4-bit g32", 6, 2, 64, 4, 32, 0, 0},
		{"per-head window softcap", 4, 4, 32, 8, 32, 5, 30},
		{"heads side by side", 8, 4, 8, 8, 32, 0, 0},
		{"per-head window beyond the context", 14, 2, 128, 4, 128, 64, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mlx.NewScope()
			defer s.Close()
			r := rand.New(rand.NewPCG(1, 2))
			c := NewQuantizedKVCache(KVQuant{Bits: tc.bits, Group: tc.group})
			defer c.Free()
			scale := float32(1 / math.Sqrt(float64(tc.d)))
			mask := mlx.Mask{Causal: true, Window: tc.window}
			// Up to QuantizedDecodeRows rows go one at a time through the
			// decode op (or, with a window or softcap, through the
			// matmuls); the last step's rows are a prompt chunk.
			steps := []int{7, 1, 1, 3, QuantizedDecodeRows + 1}
			for step, l := range steps {
				q, k, v := randn(r, 1, tc.hq, l, tc.d), randn(r, 1, tc.hkv, l, tc.d), randn(r, 1, tc.hkv, l, tc.d)
				got := c.Attend(q, k, v, scale, mask, tc.softcap)
				kk, vv := c.Dequantized()
				want := Attention(q, kk, vv, scale, mask, tc.softcap)
				if d := diffOf(t, got, want); d > 1e-5 {
					t.Fatalf("step %d: attention over codes differs from attention over the dequantized cache by %g", step, d)
				}
				last := mlx.SliceAxis(kk, 2, c.Offset()-l, c.Offset())
				// A group's step is its range / (2^bits - 1); normal data
				// ranges under ~8.
				if d, bound := diffOf(t, last, k), 8/float64(int(1)<<tc.bits-1); d > bound {
					t.Fatalf("step %d: dequantized keys off by %g > %g", step, d, bound)
				}
			}
			if want := 12 + QuantizedDecodeRows + 1; c.Offset() != want {
				t.Fatalf("offset %d, want %d", c.Offset(), want)
			}
		})
	}
}

// A round's drafted positions roll back and the cache then continues as if
// they had never been appended; a rollback outside a round, or longer
// than the round, is refused.
func TestCacheRoundsRollBack(t *testing.T) {
	mlxtest.NoLeaks(t)
	mk := map[string]func() Cache{
		"kv":        func() Cache { return NewKVCache() },
		"rotating":  func() Cache { return NewRotatingCache(4) },
		"quantized": func() Cache { return NewQuantizedKVCache(KVQuant{Bits: 8, Group: 32}) },
		"latent":    func() Cache { return QuantizeCaches([]Cache{NewLatentCache()}, KVQuant{Bits: 4, Group: 32})[0] },
	}
	for name, newCache := range mk {
		t.Run(name, func(t *testing.T) {
			s := mlx.NewScope()
			defer s.Close()
			r := rand.New(rand.NewPCG(3, 4))
			a, b := newCache(), newCache()
			defer FreeCaches([]Cache{a, b})
			rb := a.(Rounder)
			if err := rb.Rollback(1); err == nil {
				t.Fatal("rollback outside a round accepted")
			}
			var kept [][2]*mlx.Array
			for i := range 12 {
				k, v := randn(r, 1, 2, 1, 32), randn(r, 1, 2, 1, 32)
				kept = append(kept, [2]*mlx.Array{k, v})
				a.Update(k, v)
				b.Update(k, v)
				// Every third step, a round of 5 drafts of which 2 stay.
				if i%3 == 2 {
					rb.BeginRound()
					var drafts [][2]*mlx.Array
					for range 5 {
						d := [2]*mlx.Array{randn(r, 1, 2, 1, 32), randn(r, 1, 2, 1, 32)}
						drafts = append(drafts, d)
						a.Update(d[0], d[1])
					}
					if err := rb.Rollback(6); err == nil {
						t.Fatal("rollback past the round's start accepted")
					}
					if err := rb.Rollback(3); err != nil {
						t.Fatal(err)
					}
					rb.Commit()
					for _, d := range drafts[:2] { // the accepted ones
						b.Update(d[0], d[1])
					}
				}
			}
			if a.Offset() != b.Offset() {
				t.Fatalf("offsets %d vs %d", a.Offset(), b.Offset())
			}
			q := randn(r, 1, 2, 1, 32)
			ka, va := a.Update(kept[0][0], kept[0][1])
			kb, vb := b.Update(kept[0][0], kept[0][1])
			oa := Attention(q, ka, va, 0.2, mlx.Mask{Causal: true, Window: 4}, 0)
			ob := Attention(q, kb, vb, 0.2, mlx.Mask{Causal: true, Window: 4}, 0)
			if d := diffOf(t, oa, ob); d != 0 {
				t.Fatalf("after rollbacks attention differs by %g from a cache that never saw the drafts", d)
			}
		})
	}
}

// Heads that split neither into groups nor side by side are refused with
// a KVShapeError.
func TestQuantizedCacheRefusesShape(t *testing.T) {
	s := mlx.NewScope()
	defer s.Close()
	c := NewQuantizedKVCache(KVQuant{Bits: 8, Group: 64})
	defer c.Free()
	defer func() {
		e, ok := AsKVShapeError(recover())
		if !ok || e.Width != 48 || e.Group != 64 {
			t.Fatalf("got %v, want a KVShapeError for width 48, group 64", e)
		}
		var target *KVShapeError
		if !errors.As(error(e), &target) {
			t.Fatal("not an error")
		}
	}()
	r := rand.New(rand.NewPCG(1, 1))
	c.Update(randn(r, 1, 1, 1, 48), randn(r, 1, 1, 1, 48))
}

// A snapshot of a quantized cache restores its codes exactly, whatever was
// appended after it; its storage is freed with it.
func TestQuantizedCacheSnapshotRestore(t *testing.T) {
	mlxtest.NoLeaks(t)
	s := mlx.NewScope()
	defer s.Close()
	r := rand.New(rand.NewPCG(5, 6))
	c := NewQuantizedKVCache(KVQuant{Bits: 4, Group: 32})
	defer c.Free()
	c.Update(randn(r, 1, 2, 5, 32), randn(r, 1, 2, 5, 32))
	wantK, wantV := c.Dequantized()
	snap := c.Snapshot()
	c.Update(randn(r, 1, 2, 300, 32), randn(r, 1, 2, 300, 32)) // grows the storage
	if err := c.Restore(snap); err != nil {
		t.Fatal(err)
	}
	gotK, gotV := c.Dequantized()
	if c.Offset() != 5 || diffOf(t, gotK, wantK) != 0 || diffOf(t, gotV, wantV) != 0 {
		t.Fatalf("restored offset %d, keys/values differ", c.Offset())
	}
	if err := c.Restore(NewKVCache().Snapshot()); err == nil {
		t.Fatal("restored a float cache's snapshot")
	}
}

// Quantizing the caches keeps a shared layer reading its source: the new
// quantized cache, not the float one it replaced.
func TestQuantizeCachesRebindsSharedLayers(t *testing.T) {
	src := NewKVCache()
	cs := QuantizeCaches([]Cache{src, NewSharedCache(src)}, KVQuant{Bits: 8, Group: 32})
	sc, ok := cs[1].(*SharedCache)
	if !ok || sc.Source() != cs[0] {
		t.Fatalf("shared layer reads %p, want the quantized source %p", sc.Source(), cs[0])
	}
	if _, ok := cs[0].(*QuantizedKVCache); !ok {
		t.Fatalf("source is %T", cs[0])
	}
	if _, err := Rounders(cs); err != nil {
		t.Fatalf("a gemma4-style cache list cannot do speculative rounds: %v", err)
	}
}
