package mel

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

func naiveDFT(x []complex128) []complex128 {
	n := len(x)
	out := make([]complex128, n)
	for k := range n {
		var s complex128
		for j := range n {
			s += x[j] * cmplx.Rect(1, -2*math.Pi*float64(j*k%n)/float64(n))
		}
		out[k] = s
	}
	return out
}

// The mixed-radix FFT must equal the textbook DFT for sizes mixing every
// radix it has, including a prime it handles generically.
func TestFFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 4, 5, 8, 12, 30, 49, 100, 200, 400, 7 * 11} {
		p, err := newFFTPlan(n)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		want := naiveDFT(x)
		p.transform(x)
		for k := range x {
			if d := cmplx.Abs(x[k] - want[k]); d > 1e-9*float64(n) {
				t.Fatalf("n=%d bin %d: got %v want %v", n, k, x[k], want[k])
			}
		}
	}
}

func TestRealFFTPower(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{2, 8, 10, 400} {
		r, err := newRealFFT(n)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, n)
		c := make([]complex128, n)
		for i := range x {
			x[i] = rng.NormFloat64()
			c[i] = complex(x[i], 0)
		}
		want := naiveDFT(c)
		got := make([]float64, n/2+1)
		r.power(got, x)
		for k := range got {
			w := real(want[k])*real(want[k]) + imag(want[k])*imag(want[k])
			if math.Abs(got[k]-w) > 1e-9*(1+w) {
				t.Fatalf("n=%d bin %d: power %g want %g", n, k, got[k], w)
			}
		}
	}
}
