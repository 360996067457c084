package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// selectTop gives exactly the first k ids of the full ranking, ties by id
// included, and refuses a row with NaN.
func TestSelectTopMatchesRank(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var rk ranker
	for trial := range 200 {
		n := 1 + r.IntN(3000)
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(r.IntN(40)) / 4 // many ties
			if trial%3 == 0 {
				logits[i] = float32(r.NormFloat64())
			}
		}
		full := make([]int, n)
		if !rk.rank(logits, full) {
			t.Fatal("rank refused a row without NaN")
		}
		k := 1 + r.IntN(min(n, maxSelect))
		top := make([]int, k)
		if !selectTop(logits, top) {
			t.Fatal("selectTop refused a row without NaN")
		}
		if !slices.Equal(top, full[:k]) {
			t.Fatalf("n %d k %d: selectTop %v, rank %v", n, k, top, full[:k])
		}
	}
	if selectTop([]float32{1, float32(math.NaN()), 2}, make([]int, 2)) {
		t.Fatal("selectTop accepted a NaN logit")
	}
}

// Temperature alone draws, without ranking, from softmax(logits / T):
// each token's frequency over many draws is within sampling error of its
// probability, on a vocabulary large enough to hold many near-equal tokens.
func TestUnrankedDrawFollowsSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	logits := make([]float32, 1000)
	for i := range logits {
		logits[i] = float32(r.NormFloat64())
	}
	logits[17], logits[400] = 6, 5.5 // two likely tokens, away from the ends
	const temp, draws = 0.7, 40000
	s := seeded(Sampling{Temperature: temp}, 5)
	if _, ok := s.drawUnranked(logits); !ok {
		t.Fatal("temperature alone must not need ranking")
	}
	counts := make([]int, len(logits))
	for range draws {
		counts[s.draw(append([]float32(nil), logits...))]++
	}
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l-6) / temp)
	}
	for _, id := range []int{17, 400} {
		p := math.Exp(float64(logits[id]-6)/temp) / sum
		sd := math.Sqrt(p * (1 - p) / draws)
		if got := float64(counts[id]) / draws; math.Abs(got-p) > 5*sd {
			t.Errorf("token %d drawn with frequency %.4f, softmax gives %.4f (sd %.4f)", id, got, p, sd)
		}
	}
	// min-p 0.5: only tokens at least half as likely as the top one
	s = seeded(Sampling{Temperature: temp, MinP: 0.5}, 5)
	for range 2000 {
		if id := s.draw(append([]float32(nil), logits...)); id != 17 && id != 400 {
			t.Fatalf("min_p 0.5 drew token %d (logit %v)", id, logits[id])
		}
	}
	// top-p needs the order: the unranked draw declines it
	if _, ok := seeded(Sampling{Temperature: temp, TopP: 0.9}, 5).drawUnranked(logits); ok {
		t.Fatal("drawUnranked accepted top-p")
	}
}
