package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"hark/models/nn"
)

// Rows of a batch. A chat model's admission (its estimate) counts the keys
// and values of one conversation; concurrent generations decoding
// together in the engine's batch each hold their own. Each reserves what
// its row may grow to (Lease.Reserve) before it starts, and the model then
// counts the larger of the estimate's conversation, the rows' bound and
// the keys and values the batch really holds, so a row that the budget
// cannot hold waits for others to leave, or is refused when none is left
// to wait for, instead of the engine's row cap being the only guard.

// ErrRowTooBig is the refusal of a row that cannot fit even alone.
var ErrRowTooBig = errors.New("not enough memory for this generation's keys and values")

// Reserve holds, until Release, the memory a batched generation of up to
// tokens positions (prompt and reply) needs on this lease's chat model.
// It waits while the budget is held by other rows, and fails with ctx's
// error, ErrClosed, or an error wrapping ErrRowTooBig when the row cannot
// fit however many others leave. One reservation per lease.
func (l *Lease) Reserve(ctx context.Context, tokens int) error {
	if l.s.kind != Chat {
		return fmt.Errorf("only a chat model's generations reserve rows (this is a %s model)", l.s.kind)
	}
	if l.row > 0 {
		return errors.New("this lease already holds a row")
	}
	if tokens <= 0 {
		return fmt.Errorf("a row of %d tokens", tokens)
	}
	r, s := l.r, l.s
	for {
		avail := r.opt.Available()
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return ErrClosed
		}
		grown := append(slices.Clone(s.rows), tokens)
		more := s.kvPart(grown) - s.kvPart(s.rows)
		held, pending, rowsLive := r.heldLocked()
		limit := r.limit.Load()
		overLimit := limit > 0 && held+more > limit
		fits := (avail <= 0 || more <= avail-pending) && !overLimit
		if fits {
			s.rows = grown
			l.row = tokens
			r.mu.Unlock()
			return nil
		}
		var idle []*slot
		for _, o := range r.slots {
			if o != s && isDone(o.loaded) && o.err == nil && o.refs == 0 {
				idle = append(idle, o)
			}
		}
		if len(idle) > 0 {
			// An idle model goes before a row waits.
			sort.Slice(idle, func(i, j int) bool { return idle[i].lastUsed.Before(idle[j].lastUsed) })
			victim := idle[0]
			delete(r.slots, victim.key)
			r.mu.Unlock()
			r.opt.Log.Info("model unloaded to make room for a row", "kind", victim.kind, "dir", victim.dir, "for", s.dir)
			victim.free()
			continue
		}
		if rowsLive == 0 {
			r.mu.Unlock()
			return fmt.Errorf("%w: a generation of up to %d tokens on %s needs about %s more, and %s",
				ErrRowTooBig, tokens, s.dir, size(more), roomLeft(overLimit, limit, held, avail, pending))
		}
		changed := r.rowsChanged
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Conversation is the length, in tokens, of the conversation the model's
// admission counts keys and values for: what a row that names no limit of
// its own reserves, as few reach the model's full context (the others are
// counted as they grow, by what the batch really holds).
func (l *Lease) Conversation() int { return l.s.context }

// RowTokens is the row a batched generation of prompt tokens reserves:
// its prompt and maxTokens, or without a limit (maxTokens 0) the
// conversation the admission assumes (Conversation), within the model's
// context.
func (l *Lease) RowTokens(prompt, maxTokens int) int {
	tokens := prompt + maxTokens
	if maxTokens <= 0 {
		tokens = max(prompt+1, l.Conversation())
	}
	if l.Engine != nil {
		if maxCtx := l.Engine.Model.Info().MaxContext; maxCtx > 0 {
			tokens = min(tokens, maxCtx)
		}
	}
	return tokens
}

// roomLeft says what the budget has left, for a refusal.
func roomLeft(overLimit bool, limit, held, avail, pending int64) string {
	if overLimit {
		return fmt.Sprintf("the models hold %s of the %s memory limit; lower max_tokens or raise the limit", size(held), size(limit))
	}
	return fmt.Sprintf("only %s is available; lower max_tokens or choose a smaller model", size(max(avail-pending, 0)))
}

// releaseRow gives back l's row and wakes the rows waiting for room.
// With r.mu held.
func (r *Runner) releaseRow(l *Lease) {
	if l.row == 0 {
		return
	}
	if i := slices.Index(l.s.rows, l.row); i >= 0 {
		l.s.rows = slices.Delete(l.s.rows, i, i+1)
	}
	l.row = 0
	close(r.rowsChanged)
	r.rowsChanged = make(chan struct{})
}

// kvPart is the keys and values s counts with rows reserved: the
// estimate's conversation, the rows' bound, or what the batch holds now,
// whichever is largest.
func (s *slot) kvPart(rows []int) int64 {
	part := max(s.kvBase, nn.BatchCacheBound(s.perToken, rows))
	if s.chat != nil {
		part = max(part, s.chat.BatchStats().KVBytes)
	}
	return part
}

// held is the memory s counts: its admission with its keys and values
// as kvPart says.
func (s *slot) held() int64 { return s.bytes - s.kvBase + s.kvPart(s.rows) }

// heldLocked sums what the loaded models hold, the part of their rows'
// reservations past their admission and not allocated yet (which the
// system's available memory does not show yet), and the rows reserved.
// With r.mu held.
func (r *Runner) heldLocked() (held, pending int64, rows int) {
	for _, o := range r.slots {
		if !isDone(o.loaded) || o.err != nil {
			continue
		}
		held += o.held()
		rows += len(o.rows)
		if o.chat != nil {
			pending += max(nn.BatchCacheBound(o.perToken, o.rows)-max(o.kvBase, o.chat.BatchStats().KVBytes), 0)
		}
	}
	return held, pending, rows
}
