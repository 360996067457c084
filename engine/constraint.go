package engine

import (
	"errors"
	"fmt"
	"math"
)

// Constraint restricts which tokens may come next, for structured output
// (engine/grammar builds them from JSON Schema). It holds the state of one
// generation: make a fresh one for every Generate call.
type Constraint interface {
	// Mask sets the logits of tokens that cannot come next to -Inf. budget
	// is how many tokens may still be generated, this one included (0: no
	// known limit), so the constraint can close the document in time. An
	// error means no token can continue (a grammar dead end).
	Mask(logits []float32, budget int) error
	// Advance moves past the token that was chosen.
	Advance(tok int) error
	// Complete reports whether the text so far is a whole document, so
	// end of sequence may come now.
	Complete() bool
	// Final reports whether nothing may follow: generation ends.
	Final() bool
}

// constrain applies opt.Constraint to a step's logits. done means the
// document is finished and generation should stop.
func (g *generation) constrain(logits []float32, generated int) (done bool, err error) {
	c := g.opt.Constraint
	if c.Final() {
		return true, nil
	}
	budget := 0
	if g.opt.MaxTokens > 0 {
		budget = g.opt.MaxTokens - generated
	}
	if maxCtx := g.e.Model.Info().MaxContext; maxCtx > 0 {
		if left := maxCtx - len(g.e.cached) - 1; budget == 0 || left < budget {
			budget = max(left, 1)
		}
	}
	eos := make([]float32, len(g.e.EOS))
	for i, id := range g.e.EOS {
		if id >= 0 && id < len(logits) {
			eos[i] = logits[id]
		}
	}
	if err := c.Mask(logits, budget); err != nil {
		return false, fmt.Errorf("generate: structured output: %w", err)
	}
	complete := c.Complete()
	for i, id := range g.e.EOS {
		if id >= 0 && id < len(logits) {
			if complete {
				logits[id] = eos[i]
			} else {
				logits[id] = float32(math.Inf(-1))
			}
		}
	}
	for _, v := range logits {
		if !math.IsInf(float64(v), -1) {
			return false, nil
		}
	}
	if complete {
		return true, nil // only the end is left, and the model has no EOS for it
	}
	return false, errors.New("generate: structured output: no token can continue the document")
}
