package engine

import (
	"context"
	"fmt"
	"time"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/tokenizer"
)

// Speculative decoding: a drafter proposes the next few tokens, the model
// reads the pending token and all the drafts in one forward pass (inside a
// cache round, nn.Rounder), and each draft is checked against the model's
// own choice at its position, in order. At temperature 0 a draft is kept
// when it is the token plain decoding would pick, so the output is the
// same token for token; above 0 the standard rejection rule (Leviathan et
// al. 2023, Chen et al. 2023) keeps draft d with probability
// min(1, p(d)/q(d)) and on rejection samples the residual max(0, p-q), so
// every token has the model's distribution p. The first rejection ends the
// round: the cache rolls back the positions after it (a recurrent state,
// which returns only to the round's start, rolls back the whole round and
// reads the kept tokens again). Each kept token goes
// through the same path as in plain decoding (EOS, stop strings,
// penalties, limits) before the next draft is checked.

// MaxDraftTokens bounds the drafts of a round, so a verify pass reads at
// most 1 + MaxDraftTokens rows: below the row count from which the CPU
// backend rounds x to int8 (kernels.PackedInt8MinRows), so the verify
// pass's logits are bit for bit those plain decode computes, and a greedy
// reply is the one plain decoding writes.
const MaxDraftTokens = 64

// Drafter proposes tokens. PromptLookup and DraftModel are the two kinds.
type Drafter interface {
	// draft proposes up to n tokens to follow history; dists holds the
	// distribution each was drawn from, or is nil for deterministic
	// proposals (a point mass on each).
	draft(g *generation, history []int, n int) (toks []int, dists []dist, err error)
	defaultTokens() int
}

// speculate is the decode loop with a drafter. logits are the model's for
// the position after history, which the cache holds all of.
func (g *generation) speculate(ctx context.Context, res *Result, logits []float32, history []int, smp *sampler, stream *tokenizer.Stream, stop *stopper, emit func(string) error) (*Result, error) {
	e := g.e
	st := &res.Stats
	rounders, err := nn.Rounders(e.caches)
	if err != nil {
		return g.finish(res, time.Time{}, nil), fmt.Errorf("speculative decoding: %w; decode without a drafter", err)
	}
	whole := nn.WholeRounds(rounders)
	maxCtx, vocab := e.Model.Info().MaxContext, e.Model.Info().VocabSize
	var text []byte
	emitText := func(s string) error {
		text = append(text, s...)
		return emit(s)
	}
	var firstAt time.Time
	// push takes one token as plain decoding does after sampling it, and
	// reports whether generation ends there.
	push := func(tok int) (bool, error) {
		if firstAt.IsZero() {
			firstAt = time.Now()
			st.TimeToFirstToken = firstAt.Sub(g.start)
		}
		if e.isEOS(tok) {
			res.FinishReason = FinishStop
			return true, nil
		}
		res.Tokens = append(res.Tokens, tok)
		history = append(history, tok)
		smp.observe(tok)
		out, stopped := stop.add(stream.Add(tok))
		if err := emitText(out); err != nil {
			return true, err
		}
		switch {
		case stopped:
			res.FinishReason = FinishStop
		case g.opt.MaxTokens > 0 && len(res.Tokens) >= g.opt.MaxTokens:
			res.FinishReason = FinishLength
		case maxCtx > 0 && len(history) >= maxCtx:
			// As plain decoding, whose cache then holds all of history
			// but tok (a round's cache also holds drafts not yet checked).
			res.FinishReason = FinishLength
		case ctx.Err() != nil:
			res.FinishReason = FinishCancelled
		default:
			return false, nil
		}
		return true, nil
	}
	n := g.opt.DraftTokens
	if n <= 0 {
		n = g.opt.Draft.defaultTokens()
	}
	n = min(n, MaxDraftTokens)
	if err := g.checkLogits(logits, 0); err != nil {
		nn.FreeCaches(e.caches)
		e.caches, e.cached = nil, nil
		return g.finish(res, firstAt, text), err
	}
	tok := smp.sample(logits, history)
	// budget is how many tokens to draft next round, adapted as in
	// transformers' assisted generation: two more after a round whose
	// drafts were all kept, one fewer after a rejection, so a drafter that
	// guesses badly costs little.
	budget := n
	for {
		done, err := push(tok)
		if err != nil {
			return g.finish(res, firstAt, text), err
		}
		if done {
			break
		}
		// Room for the drafts: the context, and the tokens still allowed
		// (the token after the last draft comes free).
		k := budget
		if maxCtx > 0 {
			k = min(k, maxCtx-len(e.cached)-2)
		}
		if g.opt.MaxTokens > 0 {
			k = min(k, g.opt.MaxTokens-len(res.Tokens)-1)
		}
		var drafts []int
		var dists []dist
		if k > 0 {
			if drafts, dists, err = g.opt.Draft.draft(g, history, k); err != nil {
				return g.finish(res, firstAt, text), err
			}
			// A draft model's head may be wider than this model's
			// vocabulary: such a token cannot be fed, nor be right.
			for i, d := range drafts {
				if d < 0 || d >= vocab {
					drafts = drafts[:i]
					break
				}
			}
			if dists != nil {
				dists = dists[:len(drafts)]
			}
		}
		for _, r := range rounders {
			r.BeginRound()
		}
		rows := g.stepAll(append([]int{tok}, drafts...))
		st.Drafted += len(drafts)
		kept, ended := 0, false
		next := -1
		for i, d := range drafts {
			if err := g.checkLogits(rows[i], len(res.Tokens)); err != nil {
				nn.FreeCaches(e.caches)
				e.caches, e.cached = nil, nil
				return g.finish(res, firstAt, text), err
			}
			var q dist
			if dists != nil {
				q = dists[i]
			}
			ok, alt := g.verify(smp, rows[i], history, d, q)
			if !ok {
				next = alt
				break
			}
			kept++
			st.Accepted++
			if ended, err = push(d); err != nil {
				return g.finish(res, firstAt, text), err
			}
			if ended {
				break
			}
		}
		switch {
		case len(drafts) == 0:
		case kept == len(drafts):
			budget = min(budget+2, n)
		default:
			budget = max(budget-1, 1)
		}
		if drop := len(drafts) - kept; drop > 0 {
			if whole {
				// A recurrent state returns only to the round's start:
				// take back the whole round, then feed what was kept.
				drop = len(drafts) + 1
			}
			for _, r := range rounders {
				if err := r.Rollback(drop); err != nil {
					panic(err) // the round appended them: a cache bug
				}
			}
			e.cached = e.cached[:len(e.cached)-drop]
			for _, r := range rounders {
				r.Commit()
			}
			if whole {
				g.step(append([]int{tok}, drafts[:kept]...), false)
			}
		} else {
			for _, r := range rounders {
				r.Commit()
			}
		}
		if ended {
			break
		}
		if next < 0 { // every draft kept: the last row gives one more
			last := rows[len(drafts)]
			if err := g.checkLogits(last, len(res.Tokens)); err != nil {
				nn.FreeCaches(e.caches)
				e.caches, e.cached = nil, nil
				return g.finish(res, firstAt, text), err
			}
			next = smp.sample(last, history)
		}
		tok = next
	}
	if !stop.hit {
		if out, _ := stop.add(stream.Flush()); out != "" {
			if err := emitText(out); err != nil {
				return g.finish(res, firstAt, text), err
			}
		}
		if err := emitText(stop.flush()); err != nil {
			return g.finish(res, firstAt, text), err
		}
	}
	return g.finish(res, firstAt, text), nil
}

// verify checks draft d against the model's logits at its position (after
// history): it reports whether d stands and, if not, the token to take
// instead. q is the distribution d was drawn from (nil: d was chosen
// deterministically).
func (g *generation) verify(smp *sampler, logits []float32, history []int, d int, q dist) (bool, int) {
	if smp.opt.Temperature == 0 {
		t := smp.sample(logits, history)
		return t == d, t
	}
	p := smp.distribution(logits, history)
	qd := 1.0
	if q != nil {
		qd = q.at(d)
	}
	if qd > 0 && smp.rng.Float64()*qd < p.at(d) {
		return true, d
	}
	// Residual: max(0, p - q), renormalised. With q a point mass on d
	// that is p without d.
	var sum float64
	for id, pv := range p {
		r := pv - qOf(q, d, id)
		if r > 0 {
			sum += r
		} else {
			r = 0
		}
		p[id] = r
	}
	if sum <= 0 { // p == q up to rounding: keep d's distribution
		return false, d
	}
	r := smp.rng.Float64() * sum
	last := 0
	for id, w := range p {
		if w > 0 {
			last = id
			if r -= w; r < 0 {
				return false, id
			}
		}
	}
	return false, last
}

// dist is a dense probability distribution over token ids.
type dist []float64

// at is the probability of id (0 outside the vocabulary).
func (p dist) at(id int) float64 {
	if id < 0 || id >= len(p) {
		return 0
	}
	return p[id]
}

// qOf is q(id), q being a point mass on d when nil.
func qOf(q dist, d, id int) float64 {
	if q == nil {
		if id == d {
			return 1
		}
		return 0
	}
	return q.at(id)
}

// distribution is the distribution sample draws from at temperature > 0:
// the logits after sample's adjustments (bias, penalties), truncated by
// top-k, min-p and top-p, normalised. logits are changed in place.
func (s *sampler) distribution(logits []float32, history []int) dist {
	s.adjust(logits, history)
	p := make(dist, len(logits))
	order, probs, sum := s.truncated(logits)
	if sum == 0 {
		p[order[0]] = 1
		return p
	}
	for i, w := range probs {
		p[order[i]] = w / sum
	}
	return p
}

// adjust applies sample's changes to the logits (bias, penalties), without
// drawing: sample at temperature 0 does exactly that and then takes the
// argmax.
func (s *sampler) adjust(logits []float32, history []int) {
	t := s.opt.Temperature
	s.opt.Temperature = 0
	s.sample(logits, history)
	s.opt.Temperature = t
}

// stepAll runs ids through the model, extending the cache, and returns the
// logits after each (host copies).
func (g *generation) stepAll(ids []int) [][]float32 {
	e := g.e
	s := mlx.NewScope()
	defer s.Close()
	h := e.Model.Hidden(mlx.FromSlice(ids, 1, len(ids)), e.caches)
	e.cached = append(e.cached, ids...)
	all := e.Model.Logits(h).Float32s()
	v := len(all) / len(ids)
	rows := make([][]float32, len(ids))
	for i := range rows {
		rows[i] = all[i*v : (i+1)*v : (i+1)*v]
	}
	return rows
}
