package nn

import (
	"fmt"

	"hark/mlx"
)

// RowPositions is a cache that serves several sequences at once, one per
// batch row, each at its own position: RoPE rotates each row at its own
// offset (RoPE.ForwardFor) instead of the single Offset.
type RowPositions interface {
	RowOffsets() []int
}

// BatchCache is one attention layer's keys and values for a batch of
// independent sequences that decode together, one token per row per step.
//
// Each row keeps the cache it was prefilled in (Add takes it over): a
// float32 or 16-bit KVCache, a RotatingCache or a QuantizedKVCache of one
// sequence. A step's projections and MLP run for all rows at once (that
// is what batching saves: the weights are read once), but attention runs
// row by row, each in its own cache, through exactly the call the row
// makes when it decodes alone. So a row's attention is bit for bit what
// it is alone, whatever the other rows hold, with no padding to mask and
// no copy of anyone's keys, and rows of different KV settings can share a
// batch. The per-row calls cost a few microseconds a layer each, against
// the milliseconds a step's weights take to read.
//
// Its owner frees it (Free, FreeCaches): no cleanup runs when it is
// dropped, though each row's cache has its own.
type BatchCache struct {
	Window int // sliding window of the layer (0: full attention)
	rows   []Cache
}

// NewBatchCache returns an empty batch cache for a layer with the given
// sliding window (0: none).
func NewBatchCache(window int) *BatchCache {
	return &BatchCache{Window: window}
}

// Rows is how many sequences the cache holds.
func (c *BatchCache) Rows() int { return len(c.rows) }

// Batchable reports whether a row can join a BatchCache from c: a full,
// sliding-window or quantized attention cache (latent and recurrent
// caches cannot).
func Batchable(c Cache) bool {
	_, _, err := rowState(c)
	return err == nil
}

// rowState is the batch and position count of a cache that may join, or
// why it may not.
func rowState(src Cache) (batch, n int, err error) {
	switch x := src.(type) {
	case *KVCache:
		if x.latent {
			return 0, 0, fmt.Errorf("batch cache: an MLA latent cache cannot join a batch")
		}
		return x.st.b, x.st.n, nil
	case *RotatingCache:
		return x.st.b, x.st.n, nil
	case *QuantizedKVCache:
		return x.st.b, x.st.n, nil
	}
	return 0, 0, fmt.Errorf("batch cache: a %T cannot join a batch", src)
}

// Add makes src, the cache one sequence was prefilled in, a row of the
// batch and returns the row's index. The batch owns src from then on:
// Remove and Free free it.
func (c *BatchCache) Add(src Cache) (int, error) {
	b, n, err := rowState(src)
	if err != nil {
		return 0, err
	}
	if b != 1 || n == 0 {
		return 0, fmt.Errorf("batch cache: a row joins from a cache of one sequence with positions in it (have batch %d, %d positions)", b, n)
	}
	if r, ok := src.(*RotatingCache); ok != (c.Window > 0) || ok && r.Window != c.Window {
		return 0, fmt.Errorf("batch cache: a %T cannot join a layer of window %d", src, c.Window)
	}
	c.rows = append(c.rows, src)
	return len(c.rows) - 1, nil
}

// Remove drops row i and frees its cache; the other rows keep their order.
func (c *BatchCache) Remove(i int) {
	if i < 0 || i >= len(c.rows) {
		panic(fmt.Sprintf("batch cache: no row %d of %d", i, len(c.rows)))
	}
	FreeCaches(c.rows[i : i+1])
	c.rows = append(c.rows[:i], c.rows[i+1:]...)
}

// Row is row i's own cache, which the batch still owns.
func (c *BatchCache) Row(i int) Cache { return c.rows[i] }

// Update is not how a batch attends: each row's keys and values stay in
// its own cache, and Attend and AttendDecode reach them there.
func (c *BatchCache) Update(k, v *mlx.Array) (*mlx.Array, *mlx.Array) {
	panic("batch cache: Update on a batch (its rows attend in their own caches: Attend, AttendDecode)")
}

// eachRow runs one decode step of a batch of n rows: attend(i, r) is row
// i's attention in its own cache r, and the rows' outputs are stacked.
func (c *BatchCache) eachRow(n int, attend func(i int, r Cache) *mlx.Array) *mlx.Array {
	if n != len(c.rows) || n == 0 {
		panic(fmt.Sprintf("batch cache: a step of %d rows for a batch of %d", n, len(c.rows)))
	}
	outs := make([]*mlx.Array, n)
	s := mlx.NewScope()
	defer s.Close()
	for i, r := range c.rows {
		outs[i] = attend(i, r)
	}
	return s.Keep(mlx.Concatenate(outs, 0))
}

// Attend is one decode step of attention for every row: q [B, Hq, 1, D],
// and the new keys and values [B, Hkv, 1, D], each row through its own
// cache (CachedAttention) with the mask it would get alone.
func (c *BatchCache) Attend(q, k, v *mlx.Array, scale float32, mask mlx.Mask, softcap float32) *mlx.Array {
	if q.Dim(2) != 1 {
		panic(fmt.Sprintf("batch cache: %d query positions; a batch decodes one token per row per step (prefill rows alone)", q.Dim(2)))
	}
	return c.eachRow(q.Dim(0), func(i int, r Cache) *mlx.Array {
		return CachedAttention(r, rowOf(q, i), rowOf(k, i), rowOf(v, i), scale, mask, softcap)
	})
}

// AttendDecode is one fused decode step (mlx.DecodeAttention) for every
// row when every row's cache has that path (full-attention float caches),
// each at its own position; otherwise nil, changing nothing.
func (c *BatchCache) AttendDecode(qkv *mlx.Array, p mlx.DecodeAttentionParams) *mlx.Array {
	for _, r := range c.rows {
		if kc, ok := r.(*KVCache); !ok || kc.latent {
			return nil
		}
	}
	return c.eachRow(qkv.Dim(0), func(i int, r Cache) *mlx.Array { return r.AttendDecode(rowOf(qkv, i), p) })
}

// rowOf is row i of a, [1, ...], laid out as a one-row array of its own
// is (the fused kernels read their input from its start).
func rowOf(a *mlx.Array, i int) *mlx.Array {
	if a.Dim(0) == 1 {
		return a
	}
	return mlx.Copy(mlx.SliceAxis(a, 0, i, i+1))
}

// RowOffsets is each row's position before the step being run: what its
// own cache has seen.
func (c *BatchCache) RowOffsets() []int {
	offs := make([]int, len(c.rows))
	for i, r := range c.rows {
		offs[i] = r.Offset()
	}
	return offs
}

// Offset is the furthest row's position; RoPE reads RowOffsets instead.
func (c *BatchCache) Offset() int {
	o := 0
	for _, r := range c.rows {
		o = max(o, r.Offset())
	}
	return o
}

// Trim cannot roll rows back (speculative decoding runs alone).
func (c *BatchCache) Trim(n int) bool { return n == 0 }

type batchSnapshot struct{}

func (batchSnapshot) snapshot() {}

// Snapshot is not kept for a batch: rows are snapshotted alone, before
// they join.
func (c *BatchCache) Snapshot() Snapshot { return batchSnapshot{} }

// Restore refuses: a batch is never restored.
func (c *BatchCache) Restore(Snapshot) error {
	return fmt.Errorf("batch cache: a batch of rows cannot be restored from a snapshot")
}

// Reset drops and frees every row.
func (c *BatchCache) Reset() {
	FreeCaches(c.rows)
	c.rows = nil
}

// Free releases every row's storage now.
func (c *BatchCache) Free() { c.Reset() }

// Bytes is the memory the rows' caches hold.
func (c *BatchCache) Bytes() int64 { return CacheBytes(c.rows) }

// RowBytes is the memory row i's cache holds: what it holds alone.
func (c *BatchCache) RowBytes(i int) int64 {
	if i < 0 || i >= len(c.rows) {
		return 0
	}
	return CacheBytes(c.rows[i : i+1])
}
