package nn

import (
	"fmt"
	"runtime"

	"hark/mlx"
)

// RecurrentCache is the state of a linear-attention layer (Gated DeltaNet):
// instead of keys and values per position it holds a fixed-size summary of
// everything seen, so it costs the same at any context length:
//   - Conv: the last kernel-1 inputs of the layer's causal depthwise
//     convolution, [B, kernel-1, channels];
//   - State: the delta rule's per-head matrix, [B, heads, Dk, Dv].
//
// Both are replaced, never written in place, at every step, so a Snapshot
// is two shared references (views of the same storage, O(1) whatever the
// state's size) and Restore hands them back: that is what lets the prefix
// cache and speculative rollback return to an earlier point. A summary
// cannot forget its last n positions, so Trim succeeds only for n = 0; the
// engine then starts over, as for a sliding window that dropped positions.
//
// Update and AttendDecode belong to attention caches: a linear-attention
// layer reads and writes the state through Conv/State/Advance instead.
type RecurrentCache struct {
	st *recState
}

type recState struct {
	conv, state *mlx.Array // nil before the first step
	offset      int
	// An open speculative round (recurrent_round.go): the state at its
	// start, shared as a Snapshot is.
	rconv, rstate *mlx.Array
	rstart        int
	ractive       bool
}

func (s *recState) free() {
	mlx.Free(s.conv, s.state)
	s.conv, s.state, s.offset = nil, nil, 0
	s.freeRound()
}

func (s *recState) freeRound() {
	mlx.Free(s.rconv, s.rstate)
	s.rconv, s.rstate, s.rstart, s.ractive = nil, nil, 0, false
}

// NewRecurrentCache returns an empty cache.
func NewRecurrentCache() *RecurrentCache {
	c := &RecurrentCache{st: &recState{}}
	runtime.AddCleanup(c, func(s *recState) { s.free() }, c.st)
	return c
}

// Conv is the convolution's input history [B, kernel-1, channels], or nil
// before the first step. The cache owns it; it stays valid until the next
// Advance, Restore, Reset or Free.
func (c *RecurrentCache) Conv() *mlx.Array { return c.st.conv }

// State is the delta rule's state [B, heads, Dk, Dv], or nil before the
// first step; owned as Conv is.
func (c *RecurrentCache) State() *mlx.Array { return c.st.state }

// Advance replaces the state after n more positions. The cache takes
// conv and state out of their scope and owns them from now on.
func (c *RecurrentCache) Advance(conv, state *mlx.Array, n int) {
	old := *c.st
	c.st.conv, c.st.state = mlx.Detach(conv), mlx.Detach(state)
	c.st.offset += n
	mlx.Free(old.conv, old.state)
}

// Offset is the number of positions seen.
func (c *RecurrentCache) Offset() int { return c.st.offset }

// Trim reports false unless n is 0: the state cannot drop positions.
func (c *RecurrentCache) Trim(n int) bool { return n == 0 }

// Reset empties the cache.
func (c *RecurrentCache) Reset() { c.st.free() }

// Free releases the state now.
func (c *RecurrentCache) Free() { c.st.free() }

// Update panics: a recurrent layer has no keys and values.
func (c *RecurrentCache) Update(k, v *mlx.Array) (*mlx.Array, *mlx.Array) {
	panic("recurrent cache: Update is for attention layers; a linear-attention layer uses Conv/State/Advance")
}

// AttendDecode has no fused path: there is no attention to run.
func (c *RecurrentCache) AttendDecode(*mlx.Array, mlx.DecodeAttentionParams) *mlx.Array { return nil }

// recSnapshot shares the state's storage through views of its own.
type recSnapshot struct{ st recState }

func (*recSnapshot) snapshot() {}

// share returns a detached view of a (nil for nil): new references to the
// same storage, so either side may be freed first.
func share(a *mlx.Array) *mlx.Array {
	if a == nil {
		return nil
	}
	return mlx.Detach(mlx.Reshape(a, a.Shape()...))
}

// Snapshot records the state in O(1): the arrays are never written in
// place, so sharing them is as good as a copy.
func (c *RecurrentCache) Snapshot() Snapshot {
	s := &recSnapshot{st: recState{conv: share(c.st.conv), state: share(c.st.state), offset: c.st.offset}}
	if s.st.conv != nil || s.st.state != nil {
		runtime.AddCleanup(s, func(st recState) { mlx.Free(st.conv, st.state) }, s.st)
	}
	return s
}

// Restore returns to a snapshot taken from a RecurrentCache (of any
// layer shape: the next step checks it), in O(1).
func (c *RecurrentCache) Restore(s Snapshot) error {
	rs, ok := s.(*recSnapshot)
	if !ok {
		return fmt.Errorf("recurrent cache: cannot restore a %T", s)
	}
	c.st.free()
	c.st.conv, c.st.state, c.st.offset = share(rs.st.conv), share(rs.st.state), rs.st.offset
	return nil
}
