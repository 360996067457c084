package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Sampling chooses the next token from the logits. The zero value is
// greedy decoding.
type Sampling struct {
	// Temperature divides the logits; 0 picks the most likely token
	// (greedy), ignoring the filters below.
	Temperature float64 `json:"temperature"`
	// TopK keeps the K most likely tokens (0: all).
	TopK int `json:"top_k,omitempty"`
	// TopP keeps the smallest set of tokens whose probability reaches P
	// (0 or 1: all).
	TopP float64 `json:"top_p,omitempty"`
	// MinP drops tokens less likely than MinP times the most likely one.
	MinP float64 `json:"min_p,omitempty"`
	// RepetitionPenalty (>1 discourages) divides positive and multiplies
	// negative logits of tokens seen in the last RepetitionContext tokens
	// (prompt included), as in transformers / llama.cpp.
	RepetitionPenalty float64 `json:"repetition_penalty,omitempty"`
	RepetitionContext int     `json:"repetition_context,omitempty"` // 0: 64
	// PresencePenalty and FrequencyPenalty are OpenAI's: subtracted once
	// for a generated token that has appeared, and per appearance.
	PresencePenalty  float64 `json:"presence_penalty,omitempty"`
	FrequencyPenalty float64 `json:"frequency_penalty,omitempty"`
	// LogitBias is added to the logits of the given token ids.
	LogitBias map[int]float64 `json:"logit_bias,omitempty"`
	// Seed makes sampling reproducible: the same seed, prompt and options
	// give the same text. nil draws a fresh seed.
	Seed *uint64 `json:"seed,omitempty"`
}

// Validate rejects settings that make no sense.
func (s *Sampling) Validate() error {
	switch {
	case s.Temperature < 0 || math.IsNaN(s.Temperature):
		return fmt.Errorf("temperature %v must be >= 0", s.Temperature)
	case s.TopK < 0:
		return fmt.Errorf("top_k %d must be >= 0", s.TopK)
	case s.TopP < 0 || s.TopP > 1:
		return fmt.Errorf("top_p %v must be in [0, 1]", s.TopP)
	case s.MinP < 0 || s.MinP > 1:
		return fmt.Errorf("min_p %v must be in [0, 1]", s.MinP)
	case s.RepetitionPenalty < 0:
		return fmt.Errorf("repetition_penalty %v must be >= 0", s.RepetitionPenalty)
	}
	return nil
}

// sampler applies Sampling to one logits row at a time.
type sampler struct {
	opt    Sampling
	rng    *rand.Rand
	counts map[int]int // generated-token counts for presence/frequency
	rank   ranker      // scratch for draw's ordering
	probs  []float64   // scratch
	order  []int       // scratch
}

func newSampler(opt Sampling) *sampler {
	seed := rand.Uint64()
	if opt.Seed != nil {
		seed = *opt.Seed
	}
	return &sampler{opt: opt, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), counts: map[int]int{}}
}

// observe records a generated token for the presence/frequency penalties.
func (s *sampler) observe(tok int) { s.counts[tok]++ }

// sample picks a token from logits (modified in place); history is the
// context so far (prompt and generated tokens) for the repetition penalty.
func (s *sampler) sample(logits []float32, history []int) int {
	o := &s.opt
	for id, b := range o.LogitBias {
		if id >= 0 && id < len(logits) {
			logits[id] += float32(b)
		}
	}
	if o.RepetitionPenalty > 0 && o.RepetitionPenalty != 1 {
		n := o.RepetitionContext
		if n <= 0 {
			n = 64
		}
		seen := map[int]bool{}
		for _, id := range history[max(0, len(history)-n):] {
			if id < 0 || id >= len(logits) || seen[id] {
				continue
			}
			seen[id] = true
			if logits[id] > 0 {
				logits[id] /= float32(o.RepetitionPenalty)
			} else {
				logits[id] *= float32(o.RepetitionPenalty)
			}
		}
	}
	if o.PresencePenalty != 0 || o.FrequencyPenalty != 0 {
		for id, c := range s.counts {
			if id >= 0 && id < len(logits) {
				logits[id] -= float32(o.PresencePenalty + o.FrequencyPenalty*float64(c))
			}
		}
	}
	if o.Temperature == 0 {
		return argmax(logits)
	}
	return s.draw(logits)
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// draw samples from softmax(logits / T) restricted by top-k, top-p, min-p.
func (s *sampler) draw(logits []float32) int {
	if tok, ok := s.drawUnranked(logits); ok {
		return tok
	}
	order, probs, sum := s.truncated(logits)
	keep := len(probs)
	if sum == 0 { // -Inf or NaN at the top
		return order[0]
	}
	r := s.rng.Float64() * sum
	for i := 0; i < keep; i++ {
		r -= probs[i]
		if r < 0 {
			return order[i]
		}
	}
	return order[keep-1]
}

// truncated ranks logits and returns the tokens draw chooses among, most
// likely first, with their unnormalised weights exp((l - max) / T) after
// top-k, min-p and top-p, and the weights' sum (0 when the top logit is
// -Inf or NaN: then order[0] alone). The slices are scratch, valid until
// the next call.
func (s *sampler) truncated(logits []float32) (order []int, probs []float64, sum float64) {
	o := &s.opt
	n := len(logits)
	if cap(s.order) < n {
		s.order, s.probs = make([]int, n), make([]float64, n)
	}
	order, probs = s.order[:n], s.probs[:n]
	keep := n
	if o.TopK > 0 && o.TopK < keep {
		keep = o.TopK
	}
	// Most likely first; ties by id so the order (and so the draw) does not
	// depend on the sort's internals. A small top-k selects its tokens in
	// one pass (the order ranking everything would give); otherwise rank
	// writes every id itself; only the comparison sort (a row with NaN)
	// starts from the ids in order.
	if keep <= maxSelect && selectTop(logits, order[:keep]) {
		order = order[:keep]
	} else if !s.rank.rank(logits, order) {
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return ranksBefore(logits, order[a], order[b]) })
	}
	maxL := float64(logits[order[0]])
	if math.IsInf(maxL, -1) || math.IsNaN(maxL) {
		return order, probs[:1], 0
	}
	for i := 0; i < keep; i++ {
		p := math.Exp((float64(logits[order[i]]) - maxL) / o.Temperature)
		probs[i] = p
		sum += p
	}
	if o.MinP > 0 {
		// probs[0] is the top token's weight: exp(0) = 1.
		for keep > 1 && probs[keep-1] < o.MinP {
			sum -= probs[keep-1]
			keep--
		}
	}
	if o.TopP > 0 && o.TopP < 1 {
		acc := 0.0
		for i := 0; i < keep; i++ {
			acc += probs[i] / sum
			if acc >= o.TopP {
				for j := i + 1; j < keep; j++ {
					sum -= probs[j]
				}
				keep = i + 1
				break
			}
		}
	}
	return order[:keep], probs[:keep], sum
}

// ranksBefore is draw's order: higher logit first, then lower id.
func ranksBefore(logits []float32, a, b int) bool {
	if la, lb := logits[a], logits[b]; la != lb {
		return la > lb
	}
	return a < b
}
