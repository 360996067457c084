package nn

import (
	"math/rand/v2"
	"testing"

	"hark/mlx"
)

// One batched decode step over rows of different lengths gives each row
// bit for bit the attention it gets from its own cache alone, with and
// without a sliding window, before and after rows leave and join;
// RowOffsets follow each row's own position.
func TestBatchCacheMatchesRowsAlone(t *testing.T) {
	for _, window := range []int{0, 4} {
		r := rand.New(rand.NewPCG(5, uint64(window)))
		const hq, hkv, d = 4, 2, 8
		newCache := func() Cache {
			if window > 0 {
				return NewRotatingCache(window)
			}
			return NewKVCache()
		}
		lens := []int{3, 9, 1}
		alone := make([]Cache, len(lens))
		b := NewBatchCache(window)
		defer b.Free()
		// join gives the batch a row holding what alone[i] holds.
		join := func(i, n int) {
			t.Helper()
			k, v := randn(r, 1, hkv, n, d), randn(r, 1, hkv, n, d)
			alone[i] = newCache()
			alone[i].Update(k, v)
			row := newCache()
			row.Update(k, v)
			if _, err := b.Add(row); err != nil {
				t.Fatal(err)
			}
		}
		for i, n := range lens {
			join(i, n)
		}
		// step runs one token for the rows of b (alone[rows[j]] is row j).
		step := func(rows []int) {
			t.Helper()
			s := mlx.NewScope()
			defer s.Close()
			for j, i := range rows {
				if got, want := b.RowOffsets()[j], alone[i].Offset(); got != want {
					t.Fatalf("window %d: row %d at %d, alone at %d", window, j, got, want)
				}
			}
			qs, ks, vs := make([]*mlx.Array, len(rows)), make([]*mlx.Array, len(rows)), make([]*mlx.Array, len(rows))
			var want [][]float32
			for j, i := range rows {
				qs[j], ks[j], vs[j] = randn(r, 1, hq, 1, d), randn(r, 1, hkv, 1, d), randn(r, 1, hkv, 1, d)
				o := CachedAttention(alone[i], qs[j], ks[j], vs[j], 0.3, mlx.Mask{Causal: true, Window: window}, 0)
				want = append(want, o.Float32s())
			}
			got := b.Attend(mlx.Concatenate(qs, 0), mlx.Concatenate(ks, 0), mlx.Concatenate(vs, 0), 0.3, mlx.Mask{Causal: true, Window: window}, 0).Float32s()
			per := len(got) / len(rows)
			for j := range rows {
				for x, w := range want[j] {
					if got[j*per+x] != w {
						t.Fatalf("window %d: row %d value %d: batched %v, alone %v", window, j, x, got[j*per+x], w)
					}
				}
			}
		}
		rows := []int{0, 1, 2}
		for range 6 {
			step(rows)
		}
		b.Remove(1)
		rows = []int{0, 2}
		step(rows)
		alone = append(alone, nil)
		join(3, 12)
		rows = append(rows, 3)
		for range 300 { // past growStep: the rows' storage grows
			step(rows)
		}
		// A row's keys and values read back (for the prefix cache) are
		// those its cache alone holds, after joins, leaves and compaction.
		for j, i := range rows {
			n := alone[i].Offset()
			k, v, ok := BatchRowKV(b, j, 1, n)
			if window > 0 {
				if ok {
					t.Fatalf("window %d: a sliding row's positions were read back", window)
				}
				continue
			}
			wk, wv, _ := KVRange(alone[i], 1, n)
			for x, pair := range [][2]*mlx.Array{{k, wk}, {v, wv}} {
				got, want := pair[0].Float32s(), pair[1].Float32s()
				if len(got) != len(want) {
					t.Fatalf("row %d array %d: %d values read back, %d alone", j, x, len(got), len(want))
				}
				for y := range want {
					if got[y] != want[y] {
						t.Fatalf("row %d array %d value %d: %v read back, %v alone", j, x, y, got[y], want[y])
					}
				}
			}
			if got, want := b.RowBytes(j), alone[i].(*KVCache).Bytes(); got != want {
				t.Errorf("row %d: %d bytes, want %d", j, got, want)
			}
			if _, _, ok := BatchRowKV(b, j, 0, n+1); ok {
				t.Errorf("row %d: read past its %d positions", j, n)
			}
			mlx.Free(k, v, wk, wv)
		}
	}
}

// Latent and recurrent caches, empty ones, and a sliding cache in a
// full-attention layer (or the other way round) do not join a batch.
func TestBatchCacheRefuses(t *testing.T) {
	b := NewBatchCache(0)
	defer b.Free()
	if _, err := b.Add(NewKVCache()); err == nil {
		t.Error("an empty cache joined")
	}
	if Batchable(NewLatentCache()) {
		t.Error("a latent cache claims to batch")
	}
	r := rand.New(rand.NewPCG(1, 2))
	rot := NewRotatingCache(4)
	rot.Update(randn(r, 1, 2, 3, 8), randn(r, 1, 2, 3, 8))
	if _, err := b.Add(rot); err == nil {
		t.Error("a sliding-window cache joined a full-attention layer")
	}
	full := NewKVCache()
	full.Update(randn(r, 1, 2, 3, 8), randn(r, 1, 2, 3, 8))
	if _, err := NewBatchCache(4).Add(full); err == nil {
		t.Error("a full cache joined a sliding-window layer")
	}
	FreeCaches([]Cache{rot, full})
}
