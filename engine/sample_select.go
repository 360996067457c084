package engine

import (
	"math"
)

// Sampling over a 151,936-token vocabulary must not cost a sizeable part
// of a decode step. Ranking every token (rank, a radix sort) took about
// 5 ms a token on a loaded 2-core machine, 15% of a 0.5B model's step,
// and it is the gap `hark chat` showed against the model's own decode
// benchmark. Two common cases need no full ranking:
//   - a top-k of up to maxSelect tokens: one pass keeps the k best in a
//     small sorted list (most tokens are rejected by one comparison), and
//     gives exactly the order ranking would;
//   - temperature alone (min-p allowed): the draw may walk the tokens in
//     any fixed order, since every order draws from the same distribution;
//     it walks them by id.
// top-p without top-k still ranks: its cut needs the order of everything.

// maxSelect bounds the top-k selectTop handles; above it ranking is as
// cheap.
const maxSelect = 256

// selectTop writes into top the len(top) most likely token ids, most
// likely first, ties by lower id (ranksBefore's order), and reports true;
// with a NaN logit it reports false (rank's comparison sort handles it).
func selectTop(logits []float32, top []int) bool {
	k := len(top)
	if k == 0 || k > len(logits) {
		return false
	}
	n := 0
	for i, l := range logits {
		if l != l {
			return false
		}
		if n == k && !ranksBefore(logits, i, top[k-1]) {
			continue
		}
		// insertion into the sorted list: find i's place from the end
		j := min(n, k-1)
		for j > 0 && ranksBefore(logits, i, top[j-1]) {
			top[j] = top[j-1]
			j--
		}
		top[j] = i
		if n < k {
			n++
		}
	}
	return true
}

// drawUnranked draws at temperature with no top-k and no top-p (min-p
// allowed) without ranking: the weights exp((l - max) / T) of every token,
// min-p's cut applied, walked in id order. It reports false where it does
// not apply (a filter that needs the order, a NaN or infinite top logit),
// and draw then ranks.
func (s *sampler) drawUnranked(logits []float32) (int, bool) {
	o := &s.opt
	n := len(logits)
	if n == 0 || (o.TopK > 0 && o.TopK < n) || (o.TopP > 0 && o.TopP < 1) {
		return 0, false
	}
	maxL := float32(math.Inf(-1))
	for _, l := range logits {
		if l != l {
			return 0, false
		}
		maxL = max(maxL, l)
	}
	if math.IsInf(float64(maxL), 0) {
		return 0, false
	}
	if cap(s.probs) < n {
		s.order, s.probs = make([]int, n), make([]float64, n)
	}
	probs := s.probs[:n]
	m, t := float64(maxL), o.Temperature
	sum := 0.0
	for i, l := range logits {
		p := math.Exp((float64(l) - m) / t)
		if p < o.MinP { // the top token has weight 1 and min-p <= 1: it stays
			p = 0
		}
		probs[i] = p
		sum += p
	}
	r := s.rng.Float64() * sum
	last := 0
	for i, p := range probs {
		if p == 0 {
			continue
		}
		last = i
		if r -= p; r < 0 {
			return i, true
		}
	}
	return last, true // rounding left r at or above 0: the last token kept
}
