package vad

import (
	"math"
	"math/rand"
	"testing"
)

// Scoring in uneven pieces and across batches gives the same numbers as
// scoring the recording at once: the context and LSTM state carry over.
func TestScorerChunking(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	x := make([]float32, (batchFrames+37)*Frame+123)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.05)*0.3) + float32(rng.NormFloat64()*0.05)
	}
	whole := Probs(m, x)
	if want := (len(x) + Frame - 1) / Frame; len(whole) != want {
		t.Fatalf("%d frames, want %d", len(whole), want)
	}
	s := NewScorer(m)
	for rest := x; len(rest) > 0; {
		k := min(len(rest), 1+rng.Intn(3000))
		s.Push(rest[:k])
		rest = rest[k:]
	}
	pieces := s.Finish()
	if len(pieces) != len(whole) {
		t.Fatalf("%d frames in pieces, %d at once", len(pieces), len(whole))
	}
	for i := range whole {
		if d := math.Abs(float64(whole[i] - pieces[i])); d > 1e-6 {
			t.Fatalf("frame %d: %v in pieces, %v at once", i, pieces[i], whole[i])
		}
	}
}
