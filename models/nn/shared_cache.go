package nn

import (
	"fmt"

	"hark/mlx"
)

// SharedCache is the cache of a layer that attends over the keys and
// values of an earlier layer (Gemma 4's KV sharing, where the last
// num_kv_shared_layers layers reuse those of the last layer of their kind
// before them). It stores nothing: the graph hands the shared layer the
// keys and values its source's cache returned in the same forward pass.
// It exists so that every layer has a cache the engine can trim, snapshot
// and reset alike; those act on the source, through its own entry.
type SharedCache struct {
	src Cache
}

// NewSharedCache returns the cache of a layer that reads src's keys and
// values.
func NewSharedCache(src Cache) *SharedCache { return &SharedCache{src: src} }

// Source is the cache whose keys and values the layer reads.
func (c *SharedCache) Source() Cache { return c.src }

// Update is never called: a shared layer computes no keys or values.
func (c *SharedCache) Update(k, v *mlx.Array) (*mlx.Array, *mlx.Array) {
	panic("nn: SharedCache.Update: a layer that shares another's keys and values has none of its own to store")
}

// Offset is the source's: the layers see the same positions.
func (c *SharedCache) Offset() int { return c.src.Offset() }

// Trim has nothing of its own to forget; the source is trimmed through
// its own entry in the caches.
func (c *SharedCache) Trim(n int) bool { return true }

type sharedSnapshot struct{}

func (sharedSnapshot) snapshot() {}

// Snapshot holds nothing: the source's snapshot holds the state.
func (c *SharedCache) Snapshot() Snapshot { return sharedSnapshot{} }

// Restore accepts only a SharedCache's snapshot.
func (c *SharedCache) Restore(s Snapshot) error {
	if _, ok := s.(sharedSnapshot); !ok {
		return fmt.Errorf("nn: restoring a shared cache from a %T", s)
	}
	return nil
}

// Reset has nothing to clear.
func (c *SharedCache) Reset() {}

// BeginRound, Commit and Rollback have nothing of their own to track: the
// source rolls back through its own entry in the caches.
func (c *SharedCache) BeginRound()          {}
func (c *SharedCache) Commit()              {}
func (c *SharedCache) Rollback(n int) error { return nil }

// AttendDecode has no fused path: the layer attends over its source's
// keys and values itself.
func (c *SharedCache) AttendDecode(*mlx.Array, mlx.DecodeAttentionParams) *mlx.Array { return nil }
