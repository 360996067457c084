package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttnDecodeLongContext: the decode kernel, which takes the keys in
// blocks with a running softmax, agrees with the per-row path (all scores,
// softmax, then values) within float32 rounding, across block edges and
// for scores whose maximum grows from block to block, so the rescaling of
// earlier blocks is exercised.
func TestAttnDecodeLongContext(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 4096))
	for _, c := range []struct{ g, n, d int }{
		{7, 1, 64}, {7, 15, 64}, {7, 128, 64}, {7, 129, 64}, {7, 300, 64}, {7, 4100, 64},
		{1, 257, 64}, {8, 513, 64}, {4, 1000, 128}, {3, 200, 48}, {2, 130, 256},
	} {
		for _, spread := range []float32{1, 30} {
			t.Run(fmt.Sprintf("g%d_n%d_d%d_x%g", c.g, c.n, c.d, spread), func(t *testing.T) {
				q, k, v := randF32(r, c.g*c.d), randF32(r, c.n*c.d), randF32(r, c.n*c.d)
				for j := range c.n {
					// Later keys score higher: the running maximum grows.
					for i := range c.d {
						k[j*c.d+i] *= spread * float32(j+1) / float32(c.n)
					}
				}
				scale := float32(1 / math.Sqrt(float64(c.d)))
				s, o := make([]float32, c.g*c.n), make([]float32, c.g*c.d)
				if !attnDecode(q, c.g, k, v, c.n, c.d, c.d, c.d, c.d, scale, s, o) {
					t.Fatal("finite scores reported as not finite")
				}
				row, want := make([]float32, c.n), make([]float32, c.d)
				for h := range c.g {
					attnScores(q[h*c.d:], k, c.n, c.d, c.d, scale, row)
					softmaxRowF32(row, row)
					attnValues(row, v, c.n, c.d, c.d, want)
					for i, w := range want {
						if got := o[h*c.d+i]; math.Abs(float64(got-w)) > 2e-5+2e-5*math.Abs(float64(w)) {
							t.Fatalf("head %d [%d] = %g, want %g", h, i, got, w)
						}
					}
				}
			})
		}
	}
}
