package nn

import (
	"fmt"
	"runtime"

	"hark/mlx"
)

// Cache holds one attention layer's keys and values across forward calls.
//
// Update takes the new keys and values [B, Hkv, L, D] and returns what
// attention must read, ending with the L new positions, so a causal mask
// aligned to the end of the keys (mlx.CausalMask, plus the window for
// sliding layers) is always right. A quantized cache would return its own
// representation through the same call once attention accepts it; nothing
// outside the cache depends on how positions are stored.
//
// Trim and Snapshot/Restore let the engine reuse a prefix across turns and
// roll back rejected speculative tokens.
type Cache interface {
	Update(k, v *mlx.Array) (keys, values *mlx.Array)
	// Offset is the number of positions seen: the position of the next token.
	Offset() int
	// Trim forgets the last n positions. It reports false, changing
	// nothing, when the cache no longer holds what the shorter sequence
	// would need (a sliding window that has dropped old positions).
	Trim(n int) bool
	Snapshot() Snapshot
	Restore(Snapshot) error
	Reset()
	// AttendDecode is one decode step of attention read straight from a
	// fused q/k/v projection [B, 1, (Heads+2*KVHeads)*HeadDim]
	// (mlx.DecodeAttention): it appends the new key and value and returns
	// the merged heads [B, 1, Heads*HeadDim]. A cache without such a path
	// returns nil and changes nothing; the caller then splits the heads
	// and goes through Update.
	AttendDecode(qkv *mlx.Array, p mlx.DecodeAttentionParams) *mlx.Array
}

// Snapshot is an opaque copy of a cache's state.
type Snapshot interface{ snapshot() }

// The caches keep keys and values in preallocated mlx arrays of
// [B, H, cap, D], written in place with SliceAssign, and hand attention
// views of the valid positions, so a decode step copies only the new
// token's keys and values. The storage is created inside the model's scopes
// and Detached from them: the cache owns it. Free releases it at once; a
// cleanup releases it when a cache (or snapshot) is dropped unfreed.

// kvStore is [B, H, cap, D] keys and [B, H, cap, Dv] values, of which the
// first n positions of each (b, h) row are valid.
type kvStore struct {
	b, h, d, dv int
	dtype       mlx.DType // of the storage
	half        bool      // store IEEE f16, hand attention float32 (KVQuant{Bits: 16})
	cap, n      int
	k, v        *mlx.Array // nil until the first update
}

// growStep is how many positions the storage grows by, so appending one
// token at a time reallocates rarely.
const growStep = 256

func newKVStore[T any](owner *T) *kvStore {
	s := &kvStore{}
	runtime.AddCleanup(owner, func(s *kvStore) { s.free() }, s)
	return s
}

func (s *kvStore) free() {
	mlx.Free(s.k, s.v)
	s.k, s.v, s.cap, s.n = nil, nil, 0, 0
}

func (s *kvStore) init(k, v *mlx.Array) error {
	// Dim, not Shape: this runs for every layer of every decode step, and
	// Shape copies.
	if k.Ndim() != 4 || v.Ndim() != 4 || k.Dim(0) != v.Dim(0) || k.Dim(1) != v.Dim(1) || k.Dim(2) != v.Dim(2) {
		return fmt.Errorf("kv cache: keys %v and values %v must be [B, H, L, D] alike", k.Shape(), v.Shape())
	}
	if !s.fits(k.Dim(0), k.Dim(1), k.Dim(3), v.Dim(3), k.DType()) {
		return fmt.Errorf("kv cache: keys %v / values %v do not match the cached [%d, %d, _, %d]", k.Shape(), v.Shape(), s.b, s.h, s.d)
	}
	return nil
}

// fits takes the layout of an empty store's first write and reports
// whether a later write's [b, h, _, d] keys and [_, _, _, dv] values match
// the stored ones.
func (s *kvStore) fits(b, h, d, dv int, dt mlx.DType) bool {
	if s.cap == 0 && s.n == 0 {
		if s.half {
			dt = mlx.Float16
		}
		s.b, s.h, s.d, s.dv, s.dtype = b, h, d, dv, dt
		return true
	}
	return b == s.b && h == s.h && d == s.d && dv == s.dv
}

// reserve makes room for total positions, keeping the first n.
func (s *kvStore) reserve(total int) {
	if total <= s.cap {
		return
	}
	nc := (total + growStep - 1) / growStep * growStep
	s.k = regrow(s.k, s.b, s.h, nc, s.d, s.n, s.dtype)
	s.v = regrow(s.v, s.b, s.h, nc, s.dv, s.n, s.dtype)
	s.cap = nc
}

// regrow returns detached [b, h, capacity, d] storage holding the first n
// positions of old, and frees old.
//
// The storage is made resident (mlx.Resident), off the garbage-collected
// heap, as weights are: there, storage of 2 MB or more (a float32 cache's
// keys at 4,096 positions of a 0.5B model) asks for huge pages, and decode,
// which reads all of it every token, is not held up by a TLB miss every
// 4 KB. In a 0.5B model at 4,096 positions with the float32 cache (same
// process, alternating token by token) decode went from 42.3 to 47.7
// tok/s; smaller storage (f16 and quantized caches there) did not change.
func regrow(old *mlx.Array, b, h, capacity, d, n int, dt mlx.DType) *mlx.Array {
	a := mlx.Resident(mlx.Detach(mlx.Zeros([]int{b, h, capacity, d}, dt)))
	if old != nil && n > 0 {
		keep := mlx.SliceAxis(old, 2, 0, n)
		mlx.SliceAssign(a, keep, []int{0, 0, 0}, []int{b, h, n}, nil)
		keep.Free()
	}
	old.Free()
	return a
}

// appendKV writes the L new positions of k and v after the first n.
func (s *kvStore) appendKV(k, v *mlx.Array) {
	l := k.Dim(2)
	s.reserve(s.n + l)
	mlx.SliceAssign(s.k, k, []int{0, 0, s.n}, []int{s.b, s.h, s.n + l}, nil)
	mlx.SliceAssign(s.v, v, []int{0, 0, s.n}, []int{s.b, s.h, s.n + l}, nil)
	s.n += l
}

// arrays returns positions [from, n) as [B, H, n-from, D] views, owned by
// the caller (normally the model's scope). Attention reads them in place;
// they must be freed before the next update, which would otherwise copy
// the storage to leave them unchanged.
// A 16-bit store hands out float32 copies instead (widening is exact).
func (s *kvStore) arrays(from int) (*mlx.Array, *mlx.Array) {
	k, v := s.stored(from, s.n)
	if !s.half {
		return k, v
	}
	kf, vf := mlx.AsType(k, mlx.Float32), mlx.AsType(v, mlx.Float32)
	mlx.Free(k, v)
	return kf, vf
}

// stored returns positions [from, to) as views of the storage, in its
// own dtype (float16 for a 16-bit store).
func (s *kvStore) stored(from, to int) (*mlx.Array, *mlx.Array) {
	return mlx.SliceAxis(s.k, 2, from, to), mlx.SliceAxis(s.v, 2, from, to)
}

// viewDType is the dtype arrays hands attention.
func (s *kvStore) viewDType() mlx.DType {
	if s.half {
		return mlx.Float32
	}
	return s.dtype
}

// dropFront forgets the oldest m positions.
func (s *kvStore) dropFront(m int) {
	for _, a := range []*mlx.Array{s.k, s.v} {
		tail := mlx.SliceAxis(a, 2, m, s.n)
		moved := mlx.Copy(tail) // private, so the write below is in place
		tail.Free()
		mlx.SliceAssign(a, moved, []int{0, 0, 0}, []int{s.b, s.h, s.n - m}, nil)
		moved.Free()
	}
	s.n -= m
}

// snapshot copies the valid positions into detached arrays.
func (s *kvStore) snapshot() *kvSnapshot {
	snap := &kvSnapshot{st: *s}
	snap.st.k, snap.st.v, snap.st.cap = nil, nil, 0
	if s.n > 0 {
		k, v := s.stored(0, s.n)
		snap.st.k, snap.st.v = mlx.Detach(mlx.Copy(k)), mlx.Detach(mlx.Copy(v))
		mlx.Free(k, v)
		runtime.AddCleanup(snap, func(st kvStore) { mlx.Free(st.k, st.v) }, snap.st)
	}
	return snap
}

// restore replaces the contents with a snapshot's.
func (s *kvStore) restore(snap *kvStore) {
	s.free()
	*s = kvStore{b: snap.b, h: snap.h, d: snap.d, dv: snap.dv, dtype: snap.dtype, half: snap.half}
	if snap.n == 0 {
		return
	}
	s.reserve(snap.n)
	mlx.SliceAssign(s.k, snap.k, []int{0, 0, 0}, []int{s.b, s.h, snap.n}, nil)
	mlx.SliceAssign(s.v, snap.v, []int{0, 0, 0}, []int{s.b, s.h, snap.n}, nil)
	s.n = snap.n
}

// KVCache keeps every position (full attention layers).
type KVCache struct {
	st     *kvStore
	rnd    round // speculative round (cache_round.go)
	latent bool  // an MLA latent cache (NewLatentCache)
}

// NewKVCache returns an empty cache.
func NewKVCache() *KVCache {
	c := &KVCache{}
	c.st = newKVStore(c)
	return c
}

// Free releases the cache's storage now and empties it.
func (c *KVCache) Free() { c.st.free() }

// Update appends k, v and returns all cached keys and values.
func (c *KVCache) Update(k, v *mlx.Array) (*mlx.Array, *mlx.Array) {
	if err := c.st.init(k, v); err != nil {
		panic(err)
	}
	c.st.appendKV(k, v)
	return c.st.arrays(0)
}

// AttendDecode is one decode step of attention on this cache: the new
// position's queries, key and value come in one fused projection qkv
// [B, 1, (Heads+2*KVHeads)*HeadDim]; the key and value are appended and
// the queries attend over every cached position (mlx.DecodeAttention).
// It returns [B, 1, Heads*HeadDim], the heads merged.
func (c *KVCache) AttendDecode(qkv *mlx.Array, p mlx.DecodeAttentionParams) *mlx.Array {
	s := c.st
	if b := qkv.Dim(0); !s.fits(b, p.KVHeads, p.HeadDim, p.HeadDim, qkv.DType()) {
		panic(fmt.Errorf("kv cache: a decode step of [%d, _, %d heads of %d] does not match the cached [%d, %d, _, %d]", b, p.KVHeads, p.HeadDim, s.b, s.h, s.d))
	}
	s.reserve(s.n + 1)
	out := mlx.DecodeAttention(qkv, s.k, s.v, s.n, p)
	s.n++
	return out
}

// Offset is the number of cached positions.
func (c *KVCache) Offset() int { return c.st.n }

// Trim drops the last n positions.
func (c *KVCache) Trim(n int) bool {
	if n < 0 || n > c.st.n {
		return false
	}
	c.st.n -= n
	return true
}

// Reset empties the cache, keeping its buffer.
func (c *KVCache) Reset() { c.st.n = 0; c.rnd = round{} }

// Half reports whether the cache stores IEEE f16 (HalfCaches).
func (c *KVCache) Half() bool { return c.st.half }

// kvSnapshot holds the valid positions (cap 0) and, for a rotating
// cache, the positions seen.
type kvSnapshot struct {
	st     kvStore
	offset int
}

func (*kvSnapshot) snapshot() {}

// Snapshot copies the cache.
func (c *KVCache) Snapshot() Snapshot {
	s := c.st.snapshot()
	s.offset = c.st.n
	return s
}

// Restore returns to a snapshot taken from a KVCache.
func (c *KVCache) Restore(s Snapshot) error {
	ks, ok := s.(*kvSnapshot)
	if !ok {
		return fmt.Errorf("kv cache: cannot restore a %T", s)
	}
	c.st.restore(&ks.st)
	return nil
}

// RotatingCache serves a sliding-window attention layer: memory stays
// bounded by twice the window. It keeps at least the Window-1 positions
// before the next token (all a query can see besides itself) and lets up to
// Window more accumulate before dropping the oldest in one move, so
// dropping is amortised and short rollbacks stay possible. Attention must
// apply the window mask, since the returned keys can reach further back.
type RotatingCache struct {
	Window int
	st     *kvStore
	offset int   // positions seen; st holds the last st.n of them
	rnd    round // speculative round: no dropping while open
}

// NewRotatingCache returns an empty cache for a window of w positions.
func NewRotatingCache(w int) *RotatingCache {
	c := &RotatingCache{Window: w}
	c.st = newKVStore(c)
	return c
}

// Free releases the cache's storage now and empties it.
func (c *RotatingCache) Free() { c.st.free(); c.offset = 0 }

// Update appends k, v and returns the kept keys and values, the new ones
// last.
func (c *RotatingCache) Update(k, v *mlx.Array) (*mlx.Array, *mlx.Array) {
	if err := c.st.init(k, v); err != nil {
		panic(err)
	}
	if excess := c.st.n - (c.Window - 1); excess > c.Window && !c.rnd.active {
		c.st.dropFront(excess)
	}
	c.st.appendKV(k, v)
	c.offset += k.Dim(2)
	// Earlier than Window-1 before the first new position nothing is
	// visible to any new query.
	from := max(0, c.st.n-k.Dim(2)-(c.Window-1))
	return c.st.arrays(from)
}

// Offset is the number of positions seen.
// AttendDecode has no fused path on a rotating cache: its positions wrap.
func (c *RotatingCache) AttendDecode(*mlx.Array, mlx.DecodeAttentionParams) *mlx.Array { return nil }

func (c *RotatingCache) Offset() int { return c.offset }

// Trim drops the last n positions if the window before them is still held.
func (c *RotatingCache) Trim(n int) bool {
	if n < 0 || n > c.st.n {
		return false
	}
	if c.st.n-n < min(c.offset-n, c.Window-1) {
		return false
	}
	c.st.n -= n
	c.offset -= n
	return true
}

// Reset empties the cache.
func (c *RotatingCache) Reset() { c.st.n, c.offset = 0, 0; c.rnd = round{} }

// Snapshot copies the cache.
func (c *RotatingCache) Snapshot() Snapshot {
	s := c.st.snapshot()
	s.offset = c.offset
	return s
}

// Restore returns to a snapshot taken from a RotatingCache.
func (c *RotatingCache) Restore(s Snapshot) error {
	ks, ok := s.(*kvSnapshot)
	if !ok {
		return fmt.Errorf("rotating cache: cannot restore a %T", s)
	}
	c.st.restore(&ks.st)
	c.offset = ks.offset
	return nil
}

// FreeCaches releases the storage of every cache in cs now, rather than
// when the garbage collector finds them unreachable; on a GPU backend that
// memory is not the Go heap's, so owners that drop caches should call it.
func FreeCaches(cs []Cache) {
	for _, c := range cs {
		if f, ok := c.(interface{ Free() }); ok {
			f.Free()
		}
	}
}
