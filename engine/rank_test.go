package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// rank gives exactly draw's comparison order (higher logit first, ties by
// id) on rows with many ties, both zeros, infinities, subnormals and
// values of every magnitude, and refuses a row holding NaN.
func TestRankMatchesComparisonSort(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, 1, -1}
	var rk ranker
	for trial := 0; trial < 200; trial++ {
		n := 1 + r.IntN(3000)
		if trial == 0 {
			n = 151936
		}
		logits := make([]float32, n)
		for i := range logits {
			switch r.IntN(4) {
			case 0:
				logits[i] = special[r.IntN(len(special))]
			case 1:
				logits[i] = float32(r.IntN(5)) // ties
			default:
				logits[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10)))
			}
		}
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		sort.Slice(want, func(a, b int) bool { return ranksBefore(logits, want[a], want[b]) })
		got := make([]int, n)
		if !rk.rank(logits, got) {
			t.Fatalf("trial %d: rank refused a row without NaN", trial)
		}
		if !slices.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("trial %d (n=%d): position %d holds id %d (logit %v), want id %d (logit %v)",
						trial, n, i, got[i], logits[got[i]], want[i], logits[want[i]])
				}
			}
		}
	}
	order := []int{7, 7, 7}
	if rk.rank([]float32{1, float32(math.NaN()), 2}, order) || !slices.Equal(order, []int{7, 7, 7}) {
		t.Fatal("rank accepted a NaN logit or wrote the order anyway")
	}
}

// BenchmarkSampleDraw times one sampled token's draw over a Qwen-sized
// vocabulary at the default temperature, alone and with top-k and top-p.
func BenchmarkSampleDraw(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	logits := make([]float32, 151936)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 3)
	}
	for _, c := range []struct {
		name string
		opt  Sampling
	}{
		{"temp", Sampling{Temperature: 0.7}},
		{"topk40", Sampling{Temperature: 0.7, TopK: 40}},
		{"topp0.9", Sampling{Temperature: 0.7, TopP: 0.9}},
	} {
		s := newSampler(c.opt)
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s.draw(logits)
			}
		})
	}
}
