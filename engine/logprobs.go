package engine

import (
	"math"
	"sort"
)

// TokenLogprob is the log-probability the model gave a generated token, and
// the most likely alternatives at that step: log-softmax of the model's raw
// logits, before sampling settings (penalties, bias, temperature) apply,
// as OpenAI reports them.
type TokenLogprob struct {
	Token   int          `json:"token"`
	Logprob float64      `json:"logprob"`
	Top     []TopLogprob `json:"top,omitempty"`
}

// TopLogprob is one alternative at a step.
type TopLogprob struct {
	Token   int     `json:"token"`
	Logprob float64 `json:"logprob"`
}

// MaxTopLogprobs bounds Options.TopLogprobs (OpenAI's limit).
const MaxTopLogprobs = 20

// logprobRecorder keeps a copy of each step's logits (the sampler edits
// them in place) and reports the chosen token's log-probability.
type logprobRecorder struct {
	top    int
	on     func(TokenLogprob)
	logits []float32
}

// newLogprobRecorder is nil (every method a no-op) unless asked for.
func newLogprobRecorder(opt Options) *logprobRecorder {
	if opt.OnLogprob == nil {
		return nil
	}
	return &logprobRecorder{top: min(max(opt.TopLogprobs, 0), MaxTopLogprobs), on: opt.OnLogprob}
}

// before copies the logits of a step, before sampling changes them.
func (r *logprobRecorder) before(logits []float32) {
	if r != nil {
		r.logits = append(r.logits[:0], logits...)
	}
}

// chosen reports tok, sampled from the logits given to before.
func (r *logprobRecorder) chosen(tok int) {
	if r != nil {
		r.on(logprobOf(r.logits, tok, r.top))
	}
}

// logprobOf is tok's log-softmax in logits, with the top alternatives
// (ties by lower id, so the list does not depend on the sort).
func logprobOf(logits []float32, tok, top int) TokenLogprob {
	maxL := math.Inf(-1)
	for _, v := range logits {
		maxL = math.Max(maxL, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - maxL)
	}
	lse := maxL + math.Log(sum)
	lp := TokenLogprob{Token: tok, Logprob: float64(logits[tok]) - lse}
	if top > 0 {
		idx := make([]int, len(logits))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return ranksBefore(logits, idx[a], idx[b]) })
		for _, id := range idx[:min(top, len(idx))] {
			lp.Top = append(lp.Top, TopLogprob{Token: id, Logprob: float64(logits[id]) - lse})
		}
	}
	return lp
}
