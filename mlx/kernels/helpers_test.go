package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Shared test helpers: deterministic random data and tolerant comparison.

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// bitAt reads bit i of a word stream the slow, obviously-correct way; the
// tests use it as an independent model of MLX's packing.
func bitAt(words []uint32, i int) uint32 { return (words[i/32] >> uint(i%32)) & 1 }

func codeAt(words []uint32, bits, rowWords, r, j int) int {
	v := 0
	for b := 0; b < bits; b++ {
		v |= int(bitAt(words[r*rowWords:], j*bits+b)) << b
	}
	return v
}

// assertClose fails when any |got-want| exceeds tol*(1+|want|)... scaled by
// the magnitude of the terms that formed want (mag), which is the honest
// error bound for a float32 sum.
func assertClose(t *testing.T, what string, got []float32, want, mag []float64, tol float64) {
	t.Helper()
	bad := 0
	for i := range want {
		d := math.Abs(float64(got[i]) - want[i])
		if d > tol*(mag[i]+1e-30) || math.IsNaN(float64(got[i])) {
			if bad < 5 {
				t.Errorf("%s[%d] = %v, want %v (|diff| %.3g, bound %.3g)", what, i, got[i], want[i], d, tol*mag[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values out of tolerance", what, bad, len(want))
	}
}
