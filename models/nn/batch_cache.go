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
// Rows are left-padded: storage is [B, H, cap, D] and every row ends at
// the same column, so one SliceAssign appends a step for all rows and the
// causal (and sliding-window) mask aligned to the end of the keys is right
// for each of them; an explicit mask hides each row's padding. Rows join
// (Add, from a cache their prompt was prefilled in alone) and leave
// (Remove) between steps; the others' keys and values move unchanged.
// Rows from a 16-bit cache (KVQuant{Bits: 16}) keep f16 storage here too;
// rows of float32 and of f16 caches do not mix.
//
// Its owner frees it (Free, FreeCaches): no cleanup runs when it is
// dropped. It keeps every position it is given (Window only limits what attention
// reads), so it holds at most the window plus what the rows generate.
type BatchCache struct {
	Window       int // sliding window of the layer (0: full attention)
	b, h, d, dv  int
	dtype        mlx.DType
	k, v         *mlx.Array // nil while empty
	cap, end     int        // columns allocated, and where every row ends
	lens, offset []int      // per row: columns held, and positions seen
}

// NewBatchCache returns an empty batch cache for a layer with the given
// sliding window (0: none).
func NewBatchCache(window int) *BatchCache {
	return &BatchCache{Window: window}
}

// Rows is how many sequences the cache holds.
func (c *BatchCache) Rows() int { return len(c.lens) }

// Batchable reports whether a row can join a BatchCache from c: a float
// full or rotating cache (quantized, latent and recurrent caches cannot).
func Batchable(c Cache) bool {
	switch x := c.(type) {
	case *KVCache:
		return !x.latent
	case *RotatingCache:
		return true
	}
	return false
}

// Add appends a row holding what src (a *KVCache or *RotatingCache of one
// sequence) holds; src is left unchanged. It returns the row's index.
func (c *BatchCache) Add(src Cache) (int, error) {
	var st *kvStore
	var off int
	switch x := src.(type) {
	case *KVCache:
		if x.latent {
			return 0, fmt.Errorf("batch cache: an MLA latent cache cannot join a batch")
		}
		st, off = x.st, x.st.n
	case *RotatingCache:
		st, off = x.st, x.offset
	default:
		return 0, fmt.Errorf("batch cache: a %T cannot join a batch", src)
	}
	if st.b != 1 || st.n == 0 {
		return 0, fmt.Errorf("batch cache: a row joins from a cache of one sequence with positions in it (have batch %d, %d positions)", st.b, st.n)
	}
	if len(c.lens) > 0 && (st.h != c.h || st.d != c.d || st.dv != c.dv || st.dtype != c.dtype) {
		return 0, fmt.Errorf("batch cache: a row of [%d, _, %d] %v does not match the batch's [%d, _, %d] %v", st.h, st.d, st.dtype, c.h, c.d, c.dtype)
	}
	if len(c.lens) == 0 {
		c.h, c.d, c.dv, c.dtype = st.h, st.d, st.dv, st.dtype
	}
	n := st.n
	end := max(c.end, n)
	// Room before end for the widest row, and growStep after it.
	nk := mlx.Detach(mlx.Zeros([]int{c.b + 1, c.h, end + growStep, c.d}, c.dtype))
	nv := mlx.Detach(mlx.Zeros([]int{c.b + 1, c.h, end + growStep, c.dv}, c.dtype))
	if c.b > 0 {
		w := c.width()
		for _, pair := range [][2]*mlx.Array{{c.k, nk}, {c.v, nv}} {
			old := mlx.SliceAxis(pair[0], 2, c.end-w, c.end)
			mlx.SliceAssign(pair[1], old, []int{0, 0, end - w}, []int{c.b, c.h, end}, nil)
			old.Free()
		}
	}
	rk, rv := st.stored(0, st.n)
	mlx.SliceAssign(nk, rk, []int{c.b, 0, end - n}, []int{c.b + 1, c.h, end}, nil)
	mlx.SliceAssign(nv, rv, []int{c.b, 0, end - n}, []int{c.b + 1, c.h, end}, nil)
	mlx.Free(rk, rv, c.k, c.v)
	c.k, c.v, c.cap, c.end = nk, nv, end+growStep, end
	c.b++
	c.lens = append(c.lens, n)
	c.offset = append(c.offset, off)
	return c.b - 1, nil
}

// width is the columns the widest row holds.
func (c *BatchCache) width() int {
	w := 0
	for _, n := range c.lens {
		w = max(w, n)
	}
	return w
}

// Remove drops row i; the other rows keep their order and contents.
func (c *BatchCache) Remove(i int) {
	if i < 0 || i >= c.b {
		panic(fmt.Sprintf("batch cache: no row %d of %d", i, c.b))
	}
	c.lens = append(c.lens[:i], c.lens[i+1:]...)
	c.offset = append(c.offset[:i], c.offset[i+1:]...)
	c.b--
	if c.b == 0 {
		c.Reset()
		return
	}
	keep := func(a *mlx.Array) *mlx.Array {
		var parts []*mlx.Array
		if i > 0 {
			parts = append(parts, mlx.SliceAxis(a, 0, 0, i))
		}
		if i < c.b {
			parts = append(parts, mlx.SliceAxis(a, 0, i+1, c.b+1))
		}
		out := mlx.Detach(mlx.Copy(mlx.Concatenate(parts, 0)))
		mlx.Free(parts...)
		return out
	}
	s := mlx.NewScope()
	nk, nv := keep(c.k), keep(c.v)
	s.Close()
	mlx.Free(c.k, c.v)
	c.k, c.v = nk, nv
}

// Update appends one step, k and v [B, H, 1, D], and returns the keys and
// values attention reads: the widest row's columns (and no more than the
// window), the new step last.
func (c *BatchCache) Update(k, v *mlx.Array) (*mlx.Array, *mlx.Array) {
	if c.b == 0 {
		panic("batch cache: Update on an empty batch (rows join through Add)")
	}
	if k.Ndim() != 4 || k.Dim(0) != c.b || k.Dim(1) != c.h || k.Dim(2) != 1 || k.Dim(3) != c.d || v.Dim(3) != c.dv {
		panic(fmt.Sprintf("batch cache: a step of keys %v / values %v does not match the batch's [%d, %d, 1, %d]", k.Shape(), v.Shape(), c.b, c.h, c.d))
	}
	if c.end+1 > c.cap {
		c.compact()
	}
	mlx.SliceAssign(c.k, k, []int{0, 0, c.end}, []int{c.b, c.h, c.end + 1}, nil)
	mlx.SliceAssign(c.v, v, []int{0, 0, c.end}, []int{c.b, c.h, c.end + 1}, nil)
	c.end++
	for i := range c.lens {
		c.lens[i]++
		c.offset[i]++
	}
	from := c.end - c.width()
	if c.Window > 0 {
		from = max(from, c.end-c.Window)
	}
	k, v = mlx.SliceAxis(c.k, 2, from, c.end), mlx.SliceAxis(c.v, 2, from, c.end)
	if c.dtype == mlx.Float16 {
		// Rows from 16-bit caches stay 16-bit; attention reads float32.
		kf, vf := mlx.AsType(k, mlx.Float32), mlx.AsType(v, mlx.Float32)
		mlx.Free(k, v)
		return kf, vf
	}
	return k, v
}

// compact moves the columns still read to the front of storage with room
// for growStep more (columns before the widest row, or before the window,
// are read by nobody).
func (c *BatchCache) compact() {
	w := c.width()
	if c.Window > 0 {
		w = min(w, c.Window)
		for i := range c.lens {
			c.lens[i] = min(c.lens[i], w)
		}
	}
	nc := w + growStep
	move := func(a *mlx.Array, d int) *mlx.Array {
		out := mlx.Detach(mlx.Zeros([]int{c.b, c.h, nc, d}, c.dtype))
		tail := mlx.SliceAxis(a, 2, c.end-w, c.end)
		mlx.SliceAssign(out, tail, []int{0, 0, 0}, []int{c.b, c.h, w}, nil)
		tail.Free()
		a.Free()
		return out
	}
	c.k, c.v = move(c.k, c.d), move(c.v, c.dv)
	c.cap, c.end = nc, w
}

// Attend is one decode step of attention for every row: q [B, Hq, 1, D]
// over each row's own keys, its padding masked out.
func (c *BatchCache) Attend(q, k, v *mlx.Array, scale float32, mask mlx.Mask, softcap float32) *mlx.Array {
	if q.Dim(2) != 1 {
		panic(fmt.Sprintf("batch cache: %d query positions; a batch decodes one token per row per step (prefill rows alone)", q.Dim(2)))
	}
	keys, values := c.Update(k, v)
	lk := keys.Dim(2)
	allow := make([]bool, c.b*lk)
	for i, n := range c.lens {
		for j := max(0, lk-n); j < lk; j++ {
			allow[i*lk+j] = true
		}
	}
	mask.Array = mlx.FromSlice(allow, c.b, 1, 1, lk)
	return Attention(q, keys, values, scale, mask, softcap)
}

// RowOffsets is each row's position before the step being run.
func (c *BatchCache) RowOffsets() []int { return c.offset }

// Offset is the furthest row's position; RoPE reads RowOffsets instead.
func (c *BatchCache) Offset() int {
	o := 0
	for _, x := range c.offset {
		o = max(o, x)
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

// Reset drops every row.
func (c *BatchCache) Reset() {
	mlx.Free(c.k, c.v)
	c.k, c.v, c.b, c.cap, c.end, c.lens, c.offset = nil, nil, 0, 0, 0, nil, nil
}

// Free releases the storage now.
func (c *BatchCache) Free() { c.Reset() }

// Bytes is the memory the storage holds.
func (c *BatchCache) Bytes() int64 {
	if c.k == nil {
		return 0
	}
	return int64(c.b*c.h*c.cap*(c.d+c.dv)) * int64(c.dtype.Size())
}

// RowBytes is the memory row i's own positions take (what its keys and
// values would hold alone; the batch's padding is not counted).
func (c *BatchCache) RowBytes(i int) int64 {
	if i < 0 || i >= len(c.lens) {
		return 0
	}
	return int64(c.lens[i]*c.h*(c.d+c.dv)) * int64(c.dtype.Size())
}

// AttendDecode has no fused path for a batch: rows sit at different
// positions.
func (c *BatchCache) AttendDecode(*mlx.Array, mlx.DecodeAttentionParams) *mlx.Array { return nil }
