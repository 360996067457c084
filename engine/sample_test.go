package engine

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func seeded(s Sampling, seed uint64) *sampler {
	s.Seed = &seed
	return newSampler(s)
}

func TestGreedyBiasAndPenalties(t *testing.T) {
	g := seeded(Sampling{}, 1)
	if got := g.sample([]float32{0.1, 3, 2}, nil); got != 1 {
		t.Fatalf("greedy picked %d", got)
	}
	b := seeded(Sampling{LogitBias: map[int]float64{2: 5}}, 1)
	if got := b.sample([]float32{0.1, 3, 2}, nil); got != 2 {
		t.Fatalf("logit bias ignored: %d", got)
	}
	// 2/1.5 = 1.33 < 1.9: the repeated token loses its lead
	r := seeded(Sampling{RepetitionPenalty: 1.5}, 1)
	if got := r.sample([]float32{2, 1.9}, []int{0}); got != 1 {
		t.Fatalf("repetition penalty ignored: %d", got)
	}
	// negative logits are pushed further down, not up
	r2 := seeded(Sampling{RepetitionPenalty: 2}, 1)
	lg := []float32{-1, -1.5}
	if got := r2.sample(lg, []int{0}); got != 1 || lg[0] != -2 {
		t.Fatalf("negative logit penalised to %v, picked %d", lg[0], got)
	}
	f := seeded(Sampling{FrequencyPenalty: 0.4, PresencePenalty: 0.1}, 1)
	f.observe(0)
	f.observe(0)
	lg = []float32{1, 0.2}
	f.sample(lg, nil)
	if math.Abs(float64(lg[0])-(1-0.1-0.8)) > 1e-6 {
		t.Fatalf("presence/frequency penalty gave %v", lg[0])
	}
}

func draws(s *sampler, logits []float32, n int) map[int]int {
	c := map[int]int{}
	for i := 0; i < n; i++ {
		c[s.sample(append([]float32(nil), logits...), nil)]++
	}
	return c
}

func TestSamplingDistributionAndFilters(t *testing.T) {
	lg := []float32{float32(math.Log(0.5)), float32(math.Log(0.3)), float32(math.Log(0.15)), float32(math.Log(0.05))}
	const n = 20000
	c := draws(seeded(Sampling{Temperature: 1}, 3), lg, n)
	for i, p := range []float64{0.5, 0.3, 0.15, 0.05} {
		if got := float64(c[i]) / n; math.Abs(got-p) > 0.02 {
			t.Fatalf("token %d drawn with frequency %.3f, want %.2f", i, got, p)
		}
	}
	c = draws(seeded(Sampling{Temperature: 1, TopP: 0.7}, 3), lg, 2000)
	if c[2]+c[3] != 0 || c[0] == 0 || c[1] == 0 {
		t.Fatalf("top_p 0.7 drew %v (want tokens 0 and 1 only)", c)
	}
	c = draws(seeded(Sampling{Temperature: 1, TopK: 3}, 3), lg, 4000)
	if c[3] != 0 || c[2] == 0 {
		t.Fatalf("top_k 3 drew %v", c)
	}
	// min_p 0.2: tokens below 0.2*0.5 = 0.1 (tokens 3) are dropped, 0.15 kept
	c = draws(seeded(Sampling{Temperature: 1, MinP: 0.2}, 3), lg, 4000)
	if c[3] != 0 || c[2] == 0 {
		t.Fatalf("min_p 0.2 drew %v", c)
	}
	// low temperature sharpens towards the top token
	c = draws(seeded(Sampling{Temperature: 0.1}, 3), lg, 1000)
	if c[0] < 990 {
		t.Fatalf("temperature 0.1 drew the top token only %d/1000 times", c[0])
	}
}

func TestSeedDeterminesDraws(t *testing.T) {
	lg := make([]float32, 50)
	a, b, c := seeded(Sampling{Temperature: 1}, 9), seeded(Sampling{Temperature: 1}, 9), seeded(Sampling{Temperature: 1}, 10)
	var sa, sb, sc []int
	for i := 0; i < 30; i++ {
		sa = append(sa, a.sample(append([]float32(nil), lg...), nil))
		sb = append(sb, b.sample(append([]float32(nil), lg...), nil))
		sc = append(sc, c.sample(append([]float32(nil), lg...), nil))
	}
	if !slices.Equal(sa, sb) || slices.Equal(sa, sc) {
		t.Fatalf("seed 9: %v / %v, seed 10: %v", sa, sb, sc)
	}
}

func TestStopperHoldsBackPartialMatches(t *testing.T) {
	s := newStopper([]string{"", "STOP", "<end>"})
	var shown []string
	for _, d := range []string{"abc S", "T", "OX <e", "nd", "> tail"} {
		out, hit := s.add(d)
		shown = append(shown, out)
		if hit {
			break
		}
	}
	want := []string{"abc ", "", "STOX ", "", ""}
	if strings.Join(shown, "|") != strings.Join(want, "|") || !s.hit {
		t.Fatalf("shown %q, want %q (hit %v)", shown, want, s.hit)
	}
	s2 := newStopper([]string{"STOP"})
	out, _ := s2.add("the ST")
	if out != "the " || s2.flush() != "ST" {
		t.Fatalf("held text not released at the end: %q", out)
	}
}
