package engine

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

// onlyToken allows a single token id for n steps, then declares the
// document final; refuse makes Mask fail (a grammar dead end); none
// masks everything without being complete.
type onlyToken struct {
	id, n, seen int
	refuse      bool
	none        bool
}

func (c *onlyToken) Mask(logits []float32, budget int) error {
	if c.refuse {
		return errors.New("dead end for the test")
	}
	for i := range logits {
		if i != c.id || c.none {
			logits[i] = float32(math.Inf(-1))
		}
	}
	return nil
}
func (c *onlyToken) Advance(tok int) error {
	if tok != c.id {
		return errors.New("a masked token was sampled")
	}
	c.seen++
	return nil
}
func (c *onlyToken) Complete() bool { return c.seen >= c.n }
func (c *onlyToken) Final() bool    { return c.seen >= c.n }

func TestConstraintHook(t *testing.T) {
	e, _ := loadStories(t)
	prompt := e.RawPrompt("Once")
	seed := uint64(3)
	// Sampling at a high temperature still only picks the allowed token,
	// and generation ends when the constraint says the document is final.
	c := &onlyToken{id: 300, n: 5}
	res, err := e.Generate(context.Background(), prompt, Options{Sampling: Sampling{Temperature: 2, Seed: &seed}, MaxTokens: 50, Constraint: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tokens) != 5 || res.FinishReason != FinishStop {
		t.Fatalf("%v %s", res.Tokens, res.FinishReason)
	}
	for _, id := range res.Tokens {
		if id != 300 {
			t.Fatalf("token %d outside the constraint", id)
		}
	}
	// A dead end is an error, not a loop.
	if _, err := e.Generate(context.Background(), prompt, Options{MaxTokens: 50, Constraint: &onlyToken{refuse: true, n: 100}}, nil); err == nil || !strings.Contains(err.Error(), "structured output: dead end") {
		t.Fatalf("dead end: %v", err)
	}
	if _, err := e.Generate(context.Background(), prompt, Options{MaxTokens: 50, Constraint: &onlyToken{none: true, n: 1}}, nil); err == nil || !strings.Contains(err.Error(), "no token can continue") {
		t.Fatalf("nothing allowed: %v", err)
	}
}
