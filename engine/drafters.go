package engine

import (
	"fmt"
	"path/filepath"

	"hark/models/nn"
	"hark/models/tokenizer"
)

// PromptLookup drafts by n-gram lookup in the prompt and what has been
// generated (Saxena's prompt lookup decoding): it finds the latest earlier
// occurrence of the context's last MaxNgram..MinNgram tokens and proposes
// what followed it. It needs no second model and pays off where the reply
// repeats its input (summaries, quotes, edits of a transcript).
type PromptLookup struct {
	MaxNgram int // longest n-gram tried (0: 3)
	MinNgram int // shortest (0: 2; 1-grams guess too often wrongly)
	Tokens   int // drafts per round (0: 8)
}

func (p PromptLookup) defaultTokens() int { return positive(p.Tokens, 8) }

func (p PromptLookup) draft(_ *generation, history []int, n int) ([]int, []dist, error) {
	maxN := positive(p.MaxNgram, 3)
	return lookup(history, maxN, min(positive(p.MinNgram, 2), maxN), n), nil, nil
}

// lookup returns up to n tokens that followed the latest earlier match of
// history's last m tokens, for m from maxN down to minN.
func lookup(history []int, maxN, minN, n int) []int {
	h := len(history)
	for m := min(maxN, h-1); m >= minN; m-- {
		tail := history[h-m:]
		// Latest start first; the match must end before the tail begins
		// so that something follows it.
	search:
		for i := h - m - 1; i >= 0; i-- {
			for j := range m {
				if history[i+j] != tail[j] {
					continue search
				}
			}
			from := i + m
			return append([]int(nil), history[from:min(from+n, h)]...)
		}
	}
	return nil
}

func positive(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// DraftModel drafts with a second, smaller model that shares the target's
// tokenizer. It keeps its own KV cache across rounds and turns, trimmed
// to what the target kept.
type DraftModel struct {
	Engine *Engine
	Tokens int // drafts per round (0: 4)

	gen *generation // the generation smp belongs to
	smp *sampler
	// The open round on the draft's cache, which began with roundAt
	// tokens cached.
	open    bool
	roundAt int
}

// rewind takes back the open round when the draft's cache holds a
// recurrent state, which cannot drop part of a round (reuse would then
// start over): the kept drafts are read again instead.
func (d *DraftModel) rewind(de *Engine) {
	d.open = false
	rounders, err := nn.Rounders(de.caches)
	if err != nil || !nn.WholeRounds(rounders) || d.roundAt > len(de.cached) {
		return
	}
	n := len(de.cached) - d.roundAt
	for _, r := range rounders {
		if r.Rollback(n) != nil {
			return // caches replaced since: reuse sorts it out
		}
	}
	de.cached = de.cached[:d.roundAt]
}

// LoadDraft loads the model in dir as a drafter for target, refusing one
// whose tokenizer differs from the target's.
func LoadDraft(target *Engine, dir string) (*DraftModel, error) {
	d, err := Load(dir, LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("draft model: %w", err)
	}
	dm, err := NewDraftModel(target, d)
	if err != nil {
		d.Close()
		return nil, err
	}
	return dm, nil
}

// NewDraftModel drafts for target with d, an engine loaded (and owned) by
// the caller, refusing one whose tokenizer differs from the target's. The
// draft keeps d's cache between replies, so one engine drafts for one
// target at a time.
func NewDraftModel(target, d *Engine) (*DraftModel, error) {
	if d == target {
		return nil, fmt.Errorf("draft model %s is the model it would draft for; choose a smaller one", filepath.Base(d.Dir))
	}
	if err := sameTokenizer(d.Tokenizer, target.Tokenizer); err != nil {
		return nil, fmt.Errorf("draft model %s cannot draft for %s: %w", filepath.Base(d.Dir), filepath.Base(target.Dir), err)
	}
	return &DraftModel{Engine: d}, nil
}

// Close frees the draft model.
func (d *DraftModel) Close() { d.Engine.Close() }

// sameTokenizer compares two tokenizers' vocabularies token by token.
func sameTokenizer(a, b *tokenizer.Tokenizer) error {
	if a.VocabSize() != b.VocabSize() {
		return fmt.Errorf("another tokenizer (%d tokens, not %d)", a.VocabSize(), b.VocabSize())
	}
	for id := range a.VocabSize() {
		if ta, tb := a.Token(id), b.Token(id); ta != tb {
			return fmt.Errorf("another tokenizer (token %d is %q, not %q)", id, ta, tb)
		}
	}
	return nil
}

func (d *DraftModel) defaultTokens() int { return positive(d.Tokens, 4) }

func (d *DraftModel) draft(g *generation, history []int, n int) ([]int, []dist, error) {
	de := d.Engine
	de.mu.Lock()
	defer de.mu.Unlock()
	if de.Model == nil {
		return nil, nil, fmt.Errorf("draft model: engine is closed")
	}
	if mc := de.Model.Info().MaxContext; mc > 0 && len(history)+n >= mc {
		return nil, nil, nil // past the draft model's context: no drafts
	}
	if d.gen != g {
		// Its own random stream, derived from the generation's seed, so a
		// seed still fixes the text.
		opt := g.opt.Sampling
		if opt.Seed != nil {
			seed := *opt.Seed ^ 0x5deece66d
			opt.Seed = &seed
		}
		d.gen, d.smp = g, newSampler(opt)
	}
	dg := &generation{e: de, opt: Options{PrefillChunk: g.opt.PrefillChunk}}
	// The previous round's drafts stay in the cache (its round is still
	// open, so a sliding window kept them): trim to the shared prefix,
	// then close the round.
	if d.open && de.caches != nil {
		d.rewind(de)
	}
	done := de.reuse(history)
	rounders, _ := nn.Rounders(de.caches)
	for _, r := range rounders {
		r.Commit()
	}
	chunk := positive(g.opt.PrefillChunk, 512)
	var logits []float32
	for todo := history[done:]; len(todo) > 0; {
		m := min(chunk, len(todo))
		logits = dg.step(todo[:m], m == len(todo))
		todo = todo[m:]
	}
	for _, r := range rounders {
		r.BeginRound()
	}
	d.open, d.roundAt = true, len(de.cached)
	ctx := append([]int(nil), history...)
	var toks []int
	var dists []dist
	for i := range n {
		var t int
		if d.smp.opt.Temperature == 0 {
			t = d.smp.sample(logits, ctx)
		} else {
			q := d.smp.distribution(logits, ctx)
			t = drawDense(d.smp, q)
			dists = append(dists, q)
		}
		toks = append(toks, t)
		ctx = append(ctx, t)
		if de.isEOS(t) || i == n-1 {
			break
		}
		logits = dg.step([]int{t}, true)
	}
	return toks, dists, nil
}

// drawDense samples from a normalised dense distribution.
func drawDense(s *sampler, q dist) int {
	r := s.rng.Float64()
	last := 0
	for id, w := range q {
		if w > 0 {
			last = id
			if r -= w; r < 0 {
				return id
			}
		}
	}
	return last
}
