package nn

import (
	"fmt"
	"math"

	"hark/mlx"
)

var negInf = math.Inf(-1)

// Rounder is a cache that takes part in speculative decoding: BeginRound
// marks the current position, the round appends drafted positions, and
// Rollback(n) forgets the last n of them (the rejected drafts) while
// Commit keeps what is left. It is optional: a cache kind that cannot
// take back positions does not implement it, and speculative decoding
// refuses such a model. A recurrent state rolls back only a whole round
// (WholeRounds).
type Rounder interface {
	BeginRound()
	Commit()
	Rollback(n int) error
}

// round tracks an open speculative round.
type round struct {
	active bool
	start  int // Offset at BeginRound
}

func (r *round) begin(off int) { *r = round{active: true, start: off} }

// check validates a rollback of n positions from off.
func (r *round) check(off, n int) error {
	if !r.active {
		return fmt.Errorf("kv cache: rollback of %d positions outside a round", n)
	}
	if n < 0 || off-n < r.start {
		return fmt.Errorf("kv cache: rollback of %d positions, but the round appended only %d", n, off-r.start)
	}
	return nil
}

// BeginRound opens a speculative round at the current position.
func (c *KVCache) BeginRound() { c.rnd.begin(c.Offset()) }

// Commit closes the round, keeping every position left.
func (c *KVCache) Commit() { c.rnd = round{} }

// Rollback forgets the last n positions appended in the round.
func (c *KVCache) Rollback(n int) error {
	if err := c.rnd.check(c.Offset(), n); err != nil {
		return err
	}
	c.Trim(n)
	return nil
}

// BeginRound opens a speculative round; until Commit the cache keeps every
// position appended (it drops old ones only outside rounds), so any part
// of the round can be rolled back.
func (c *RotatingCache) BeginRound() { c.rnd.begin(c.Offset()) }

// Commit closes the round.
func (c *RotatingCache) Commit() { c.rnd = round{} }

// Rollback forgets the last n positions appended in the round.
func (c *RotatingCache) Rollback(n int) error {
	if err := c.rnd.check(c.Offset(), n); err != nil {
		return err
	}
	if !c.Trim(n) {
		return fmt.Errorf("rotating cache: cannot roll back %d positions", n)
	}
	return nil
}

// BeginRound opens a speculative round at the current position.
func (c *QuantizedKVCache) BeginRound() { c.rnd.begin(c.Offset()) }

// Commit closes the round.
func (c *QuantizedKVCache) Commit() { c.rnd = round{} }

// Rollback forgets the last n positions appended in the round: the codes
// of a position depend on that position alone, so the rest is unchanged.
func (c *QuantizedKVCache) Rollback(n int) error {
	if err := c.rnd.check(c.Offset(), n); err != nil {
		return err
	}
	c.Trim(n)
	return nil
}

// Bytes is the memory the storage holds.
func (c *KVCache) Bytes() int64 { return c.st.bytes() }

// Bytes is the memory the storage holds.
func (c *RotatingCache) Bytes() int64 { return c.st.bytes() }

func (s *kvStore) bytes() int64 {
	if s.k == nil {
		return 0
	}
	return int64(s.b*s.h*s.cap*(s.d+s.dv)) * int64(s.dtype.Size())
}

// NewLatentCache returns the cache of an MLA layer (DeepSeek): a KVCache
// whose "keys" are the latent and whose "values" the small rotary key, so
// that quantizing it (QuantizeCaches) keeps the rotary part in float.
func NewLatentCache() *KVCache {
	c := NewKVCache()
	c.latent = true
	return c
}

// Attender is a cache that runs attention over its own storage (a
// quantized cache reads its codes).
type Attender interface {
	Attend(q, k, v *mlx.Array, scale float32, mask mlx.Mask, softcap float32) *mlx.Array
}

// CachedAttention appends k, v [B, Hkv, L, D] to c and returns attention
// of q [B, Hq, L, D] over the cache: through the cache's own Attend where
// it has one, else Update then Attention.
func CachedAttention(c Cache, q, k, v *mlx.Array, scale float32, mask mlx.Mask, softcap float32) *mlx.Array {
	if a, ok := c.(Attender); ok {
		return a.Attend(q, k, v, scale, mask, softcap)
	}
	k, v = c.Update(k, v)
	return Attention(q, k, v, scale, mask, softcap)
}

// Rounders returns cs as Rounders, or an error naming the first layer
// whose cache kind cannot roll back.
func Rounders(cs []Cache) ([]Rounder, error) {
	rs := make([]Rounder, len(cs))
	for i, c := range cs {
		r, ok := c.(Rounder)
		if !ok {
			return nil, fmt.Errorf("layer %d's cache (%T) cannot roll back drafted tokens", i, c)
		}
		rs[i] = r
	}
	return rs, nil
}
