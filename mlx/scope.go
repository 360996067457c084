package mlx

import (
	"sync"
	"sync/atomic"
)

// Scope frees, when closed, every array created while it was the innermost
// open scope of its goroutine, except the arrays passed to Keep or Detach.
// Typical model code:
//
//	func (l *Layer) Forward(x *mlx.Array) *mlx.Array {
//		s := mlx.NewScope()
//		defer s.Close()
//		h := mlx.Add(x, mlx.Matmul(x, l.W))
//		return s.Keep(mlx.Silu(h)) // everything else made here is freed
//	}
//
// Scopes nest: a kept array moves to the enclosing scope (if any), so an
// outer scope still cleans it up unless it keeps it too. Arrays freed
// explicitly inside a scope are simply skipped.
//
// Each goroutine has its own stack of scopes: an array joins the innermost
// scope opened by the goroutine that creates it, so a chat generation and a
// transcription on two goroutines never free each other's arrays. A
// goroutine must close the scopes it opened before it exits.
type Scope struct {
	arrays []*Array
	parent *Scope
	g      uintptr // goroutine whose stack this scope is on
	closed bool
}

var (
	// scopeMu guards every Scope and the scope fields of every Array.
	scopeMu sync.Mutex
	// tops is the innermost open scope of each goroutine that has one.
	tops = map[uintptr]*Scope{}
	// openScopes counts open scopes over all goroutines, so that array
	// creation skips the lock entirely when no scope is open.
	openScopes atomic.Int64
)

// NewScope opens a scope nested in the calling goroutine's current one.
func NewScope() *Scope {
	g := curg()
	openScopes.Add(1)
	scopeMu.Lock()
	defer scopeMu.Unlock()
	s := &Scope{parent: tops[g], g: g}
	tops[g] = s
	return s
}

func track(a *Array) {
	if openScopes.Load() == 0 {
		return
	}
	g := curg()
	scopeMu.Lock()
	if s := tops[g]; s != nil {
		s.add(a)
	}
	scopeMu.Unlock()
}

// add makes s own a; scopeMu must be held.
func (s *Scope) add(a *Array) {
	if s.arrays == nil {
		s.arrays = make([]*Array, 0, 32) // a layer's worth of temporaries
	}
	a.scope, a.slot = s, len(s.arrays)
	s.arrays = append(s.arrays, a)
}

// unlink removes a from the scope that owns it, if any; scopeMu must be
// held.
func unlink(a *Array) {
	if s := a.scope; s != nil {
		s.arrays[a.slot] = nil
		a.scope = nil
	}
}

// Keep exempts a from this scope and hands it to the enclosing scope, and
// returns a for chaining. Arrays this scope does not own are left alone.
func (s *Scope) Keep(a *Array) *Array {
	s.KeepAll(a)
	return a
}

// KeepAll is Keep for several arrays.
func (s *Scope) KeepAll(xs ...*Array) {
	scopeMu.Lock()
	defer scopeMu.Unlock()
	for _, x := range xs {
		if x == nil || x.scope != s {
			continue
		}
		unlink(x)
		if s.parent != nil {
			s.parent.add(x)
		}
	}
}

// FreeOwned frees a now if this scope owns it (made inside it, or kept
// into it from an inner scope), and leaves any other array alone: a loop
// that replaces a value every pass (a model's hidden state, layer after
// layer) drops the old one instead of holding them all until Close.
func (s *Scope) FreeOwned(a *Array) {
	scopeMu.Lock()
	owned := a != nil && a.scope == s
	if owned {
		unlink(a)
	}
	scopeMu.Unlock()
	if owned {
		a.Free()
	}
}

// Detach takes a out of whatever scope owns it and returns it: the caller
// now owns it and must Free it. Long-lived state made inside model code
// (KV-cache storage) uses it. Detached arrays are counted by
// DetachedArrays instead of LiveArrays, because their lifetime is their
// owner's, not a step's, and leak tests check the per-step temporaries.
func Detach(a *Array) *Array {
	a.check("Detach")
	scopeMu.Lock()
	unlink(a)
	if !a.detached {
		a.detached = true
		liveArrays.Add(-1)
		detachedArrays.Add(1)
	}
	scopeMu.Unlock()
	return a
}

// Close frees the scope's arrays and makes its parent current again.
// Closing an outer scope first also closes the inner ones still open. Close
// is idempotent and may run on any goroutine.
func (s *Scope) Close() {
	scopeMu.Lock()
	if s.closed {
		scopeMu.Unlock()
		return
	}
	// Close any inner scopes left open (e.g. a panic skipped their Close).
	onStack := false
	for t := tops[s.g]; t != nil && !onStack; t = t.parent {
		onStack = t == s
	}
	var toFree []*Array
	closeOne := func(t *Scope) {
		// The scope's own list, compacted in place, is the list to free
		// when it is the only one (the usual case): growing a fresh one by
		// append cost several allocations per closed layer scope.
		live := t.arrays[:0]
		for _, a := range t.arrays {
			if a != nil {
				a.scope = nil
				live = append(live, a)
			}
		}
		if toFree == nil {
			toFree = live
		} else {
			toFree = append(toFree, live...)
		}
		t.arrays, t.closed = nil, true
		openScopes.Add(-1)
	}
	if !onStack {
		closeOne(s)
	}
	for t := tops[s.g]; onStack && t != nil; t = t.parent {
		closeOne(t)
		if t == s {
			if s.parent != nil {
				tops[s.g] = s.parent
			} else {
				delete(tops, s.g)
			}
			break
		}
	}
	scopeMu.Unlock()
	for _, a := range toFree {
		a.Free()
	}
}

// Scoped runs fn inside a fresh scope and keeps only what fn returns.
func Scoped(fn func() []*Array) []*Array {
	s := NewScope()
	defer s.Close()
	out := fn()
	s.KeepAll(out...)
	return out
}
