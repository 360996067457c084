package engine

import (
	"fmt"
	"math"
)

// MaxTopLogprobs bounds Options.TopLogprobs (OpenAI's limit).
const MaxTopLogprobs = 20

// TokenLogprob is one generated token with its log probability and, when
// asked, the most likely alternatives at that step. Probabilities are the
// model's (softmax of the logits, after any Constraint's mask, before
// temperature, penalties and the top-k/p filters), as OpenAI reports them.
type TokenLogprob struct {
	Token   int     `json:"token"`
	Text    string  `json:"text"` // the token's bytes (part of a character shows as U+FFFD)
	Logprob float64 `json:"logprob"`
	// Top are the TopLogprobs most likely tokens, most likely first.
	Top []TopLogprob `json:"top,omitempty"`
}

// TopLogprob is an alternative token at a step.
type TopLogprob struct {
	Token   int     `json:"token"`
	Text    string  `json:"text"`
	Logprob float64 `json:"logprob"`
}

func validateLogprobs(opt *Options) error {
	if opt.OnLogprob != nil {
		opt.Logprobs = true
	}
	if opt.TopLogprobs < 0 || opt.TopLogprobs > MaxTopLogprobs {
		return fmt.Errorf("top_logprobs %d must be in [0, %d]", opt.TopLogprobs, MaxTopLogprobs)
	}
	if opt.TopLogprobs > 0 && !opt.Logprobs {
		return fmt.Errorf("top_logprobs needs logprobs")
	}
	return nil
}

// logprobStep holds what a step's logprobs need from the logits before the
// sampler changes them in place.
type logprobStep struct {
	row []float32 // a copy of the logits
	lse float64   // log of the sum of exp(logits)
	top []TopLogprob
}

func (g *generation) prepareLogprobs(logits []float32) {
	st := &g.lp
	st.row = append(st.row[:0], logits...)
	maxL := math.Inf(-1)
	for _, v := range logits {
		maxL = math.Max(maxL, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - maxL)
	}
	st.lse = maxL + math.Log(sum)
	st.top = st.top[:0]
	k := g.opt.TopLogprobs
	if k == 0 {
		return
	}
	// Insertion into a short sorted list: one pass over the row.
	for id, v := range logits {
		if math.IsInf(float64(v), -1) || math.IsNaN(float64(v)) {
			continue
		}
		lp := float64(v) - st.lse
		if len(st.top) == k && lp <= st.top[k-1].Logprob {
			continue
		}
		if len(st.top) < k {
			st.top = append(st.top, TopLogprob{})
		}
		i := len(st.top) - 1
		for i > 0 && st.top[i-1].Logprob < lp {
			st.top[i] = st.top[i-1]
			i--
		}
		st.top[i] = TopLogprob{Token: id, Logprob: lp}
	}
}

func (g *generation) recordLogprob(res *Result, tok int) {
	st := &g.lp
	lp := TokenLogprob{Token: tok, Text: g.tokenText(tok), Logprob: float64(st.row[tok]) - st.lse}
	for _, t := range st.top {
		t.Text = g.tokenText(t.Token)
		lp.Top = append(lp.Top, t)
	}
	res.Logprobs = append(res.Logprobs, lp)
	if g.opt.OnLogprob != nil {
		g.opt.OnLogprob(lp)
	}
}

func (g *generation) tokenText(id int) string {
	if b, ok := g.e.Tokenizer.TokenBytes(id); ok {
		return string(b)
	}
	return g.e.Tokenizer.Token(id) // a special token: its name
}
