package nn

import (
	"fmt"

	"hark/mlx"
)

// A recurrent state takes part in speculative rounds by snapshot: a
// summary cannot forget its last positions, but its Snapshot is O(1), so
// BeginRound records the state and Rollback returns to it. It can
// therefore roll back only the whole round; the caller (see WholeRounds)
// rolls back every cache to the round's start and feeds the kept
// positions again, which costs one more forward pass over them.

// wholeRounder is a Rounder whose Rollback takes back only the whole round.
type wholeRounder interface{ wholeRound() }

// WholeRounds reports whether some of rs roll back only a whole round. A
// caller that keeps part of a round must then roll back all of it and
// feed the kept positions again.
func WholeRounds(rs []Rounder) bool {
	for _, r := range rs {
		if _, ok := r.(wholeRounder); ok {
			return true
		}
	}
	return false
}

func (*RecurrentCache) wholeRound() {}

// BeginRound records the state (O(1), see Snapshot).
func (c *RecurrentCache) BeginRound() {
	s := c.st
	s.freeRound()
	s.rconv, s.rstate, s.rstart, s.ractive = share(s.conv), share(s.state), s.offset, true
}

// Commit closes the round, keeping the state.
func (c *RecurrentCache) Commit() { c.st.freeRound() }

// Rollback returns to the round's start when n is every position the
// round appended (0 keeps the state); any other n is an error, as the
// state cannot drop part of them.
func (c *RecurrentCache) Rollback(n int) error {
	s := c.st
	if !s.ractive {
		return fmt.Errorf("recurrent cache: rollback of %d positions outside a round", n)
	}
	if n == 0 {
		return nil
	}
	if n != s.offset-s.rstart {
		return fmt.Errorf("recurrent cache: cannot roll back %d of the round's %d positions, only all of them", n, s.offset-s.rstart)
	}
	conv, state := share(s.rconv), share(s.rstate)
	mlx.Free(s.conv, s.state)
	s.conv, s.state, s.offset = conv, state, s.rstart
	return nil
}
