package transcribe

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// beamSearch is OpenAI's BeamSearchDecoder for one audio: each step
// expands every live beam by its beamSize+1 best tokens, keeps the
// beamSize best unfinished sequences, and sets aside finished ones until
// round(beamSize*patience) of them exist.
type beamSearch struct {
	size, maxCandidates int
	eot                 int
	finished            *orderedScores
}

func newBeamSearch(size int, patience float64, eot int) *beamSearch {
	if patience <= 0 {
		patience = 1
	}
	return &beamSearch{
		size:          size,
		maxCandidates: int(math.RoundToEven(float64(size) * patience)),
		eot:           eot,
		finished:      newOrderedScores(),
	}
}

// orderedScores is a Python dict from sequence to score: insertion ordered,
// re-inserting a key keeps its place.
type orderedScores struct {
	keys   []string
	seqs   map[string][]int
	scores map[string]float32
	source map[string]int
}

func newOrderedScores() *orderedScores {
	return &orderedScores{seqs: map[string][]int{}, scores: map[string]float32{}, source: map[string]int{}}
}

func seqKey(s []int) string {
	var b strings.Builder
	for _, t := range s {
		b.WriteString(strconv.Itoa(t))
		b.WriteByte(',')
	}
	return b.String()
}

func (o *orderedScores) set(seq []int, score float32, src int) {
	k := seqKey(seq)
	if _, ok := o.seqs[k]; !ok {
		o.keys = append(o.keys, k)
		o.seqs[k] = seq
	}
	o.scores[k] = score
	o.source[k] = src
}

func (o *orderedScores) len() int { return len(o.keys) }

// sortedDesc lists keys by descending score; ties keep insertion order (as
// Python's stable sorted(..., reverse=True)).
func (o *orderedScores) sortedDesc() []string {
	ks := append([]string(nil), o.keys...)
	sort.SliceStable(ks, func(i, j int) bool { return o.scores[ks[i]] > o.scores[ks[j]] })
	return ks
}

// update advances the beams. tokens and sums have one row per beam; it
// returns the new rows, the source row of each (to reorder the KV cache)
// and whether enough sequences have finished.
func (b *beamSearch) update(tokens [][]int, logits [][]float32, sums []float32) ([][]int, []int, bool) {
	cands := newOrderedScores()
	for j, row := range logits {
		lp := logSoftmax(row)
		for _, t := range topK(lp, b.size+1) {
			seq := append(append(make([]int, 0, len(tokens[j])+1), tokens[j]...), t)
			cands.set(seq, sums[j]+float32(lp[t]), j)
		}
	}
	var next [][]int
	var src []int
	newlyFinished := newOrderedScores()
	for _, k := range cands.sortedDesc() {
		seq := cands.seqs[k]
		if seq[len(seq)-1] == b.eot {
			newlyFinished.set(seq, cands.scores[k], 0)
			continue
		}
		sums[len(next)] = cands.scores[k]
		next = append(next, seq)
		src = append(src, cands.source[k])
		if len(next) == b.size {
			break
		}
	}
	for _, k := range newlyFinished.sortedDesc() {
		if b.finished.len() >= b.maxCandidates {
			break
		}
		b.finished.set(newlyFinished.seqs[k], newlyFinished.scores[k], 0)
	}
	// Fewer live candidates than beams can only happen with a tiny
	// vocabulary; keep the batch shape by repeating the best one.
	for len(next) < b.size && len(next) > 0 {
		sums[len(next)] = sums[0]
		next = append(next, next[0])
		src = append(src, src[0])
	}
	return next, src, b.finished.len() >= b.maxCandidates
}

// finalize returns the finished sequences with their scores, topped up
// with the best live beams (closed by end-of-text) when fewer than the beam
// size finished.
func (b *beamSearch) finalize(tokens [][]int, sums []float32) ([][]int, []float64) {
	if b.finished.len() < b.size {
		order := make([]int, len(tokens))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(i, j int) bool { return sums[order[i]] > sums[order[j]] })
		for _, j := range order {
			seq := append(append([]int(nil), tokens[j]...), b.eot)
			b.finished.set(seq, sums[j], 0)
			if b.finished.len() >= b.size {
				break
			}
		}
	}
	var seqs [][]int
	var scores []float64
	for _, k := range b.finished.keys {
		seqs = append(seqs, b.finished.seqs[k])
		scores = append(scores, float64(b.finished.scores[k]))
	}
	return seqs, scores
}

// topK returns the indices of the k largest values, largest first (first
// index wins a tie).
func topK(v []float64, k int) []int {
	idx := make([]int, 0, k+1)
	for i, x := range v {
		if math.IsInf(x, -1) && len(idx) >= k {
			continue
		}
		pos := len(idx)
		for pos > 0 && v[idx[pos-1]] < x {
			pos--
		}
		if pos >= k {
			continue
		}
		idx = append(idx, 0)
		copy(idx[pos+1:], idx[pos:])
		idx[pos] = i
		if len(idx) > k {
			idx = idx[:k]
		}
	}
	return idx
}
