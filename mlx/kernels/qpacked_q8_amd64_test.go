//go:build cgo

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// q8Bound is the error the int8 kernel may make on out[i][j] beyond
// float32 rounding: rounding x to xi·d_g with d_g = max|x_g|/127 moves
// each value by at most d_g/2 = max|x_g|/254 (and a group below the
// kernel's 1e-30 cut-off by all of itself), and that error meets only the
// scale term s·q of each weight (the bias term uses x's float sums).
// So |err| <= Σ_g e_g Σ_{v in g} |s_g q_v|.
func q8Bound(x []float32, m, k, n int, w []uint32, scales []float32, gs int) []float64 {
	gpr, wpr := k/gs, k/8
	bound := make([]float64, m*n)
	for i := range m {
		for g := range gpr {
			amax := 0.0
			for _, v := range x[i*k+g*gs : i*k+(g+1)*gs] {
				amax = math.Max(amax, math.Abs(float64(v)))
			}
			e := amax / 254
			if amax < 1e-30 {
				e = amax
			}
			for j := range n {
				sq := 0.0
				for c := g * gs; c < (g+1)*gs; c++ {
					sq += math.Abs(float64(scales[j*gpr+g]) * float64(codeAt(w, 4, wpr, j, c)))
				}
				bound[i*n+j] += e * sq
			}
		}
	}
	return bound
}

// q8Violations counts outputs further from want than bound plus float32
// rounding (1e-5 of the terms' magnitude, as every quantized kernel's
// test allows), and the largest |err| / allowed seen.
func q8Violations(got []float32, want, mag, bound []float64) (int, float64) {
	bad, worst := 0, 0.0
	for i := range want {
		allowed := bound[i] + 1e-5*(mag[i]+1e-30)
		d := math.Abs(float64(got[i]) - want[i])
		if d > allowed || math.IsNaN(float64(got[i])) {
			bad++
		}
		worst = math.Max(worst, d/allowed)
	}
	return bad, worst
}

// TestPackedQ8Rows holds the int8 kernel to the float64 reference within
// the bound its quantization of x allows (q8Bound), for every m from 1 to
// 13 (partial blocks of x rows) and two prefill-sized ones (300 rows: the
// prep then runs in chunks of several pq8PrepRows on 2+ workers), on shapes with
// partial tiles, a partial chunk of tiles, groups of 128 with a one-group
// last superblock and a long row, for plain and wide-range x. The same
// check must fail on a planted bug: a row's even and odd x values
// swapped before the kernel sees them.
func TestPackedQ8Rows(t *testing.T) {
	needPacked(t)
	r := rand.New(rand.NewPCG(51, 52))
	shapes := [][3]int{{1, 128, 64}, {7, 128, 128}, {33, 896, 64}, {61, 384, 128}, {131, 640, 128}, {70, 4864, 64}}
	worst := 0.0
	for _, sh := range shapes {
		n, k, gs := sh[0], sh[1], sh[2]
		w, s, b, p := packedFixture(t, r, n, k, gs)
		for _, m := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 37, 300} {
			for xi, x := range [][]float32{randSlice(r, m*k), wideX(r, m*k)} {
				name := fmt.Sprintf("%v_m%d_x%d", sh, m, xi)
				want, mag := refQMatmul(x, m, k, n, w, s, b, gs, 4, true)
				bound := q8Bound(x, m, k, n, w, s, gs)
				out := make([]float32, m*n)
				if !packedQ8Matmul(x, m, p, out) {
					t.Fatalf("%s: the int8 kernel refused a finite x", name)
				}
				bad, ratio := q8Violations(out, want, mag, bound)
				if bad > 0 {
					t.Errorf("%s: %d of %d outputs outside the bound (worst |err|/bound %.3g)", name, bad, len(out), ratio)
				}
				worst = math.Max(worst, ratio)
				if xi == 0 && m == 5 {
					// The planted bug: the last row with each pair of
					// even and odd values swapped (the nibble order lost).
					xs := append([]float32(nil), x...)
					for c := 0; c < k; c += 2 {
						at := (m-1)*k + c
						xs[at], xs[at+1] = xs[at+1], xs[at]
					}
					if !packedQ8Matmul(xs, m, p, out) {
						t.Fatal("planted x refused")
					}
					if bad, _ := q8Violations(out, want, mag, bound); bad == 0 {
						t.Errorf("%s: a swapped block passed the check", name)
					}
				}
			}
		}
	}
	t.Logf("largest |err| / allowed: %.3g", worst)
}

// TestPackedQ8NonFinite: an x with an infinity or NaN is refused, so the
// caller takes the float path, and PackedQ4Matmul still gives the float
// results there.
func TestPackedQ8NonFinite(t *testing.T) {
	needPacked(t)
	r := rand.New(rand.NewPCG(53, 54))
	const m, k, n, gs = 6, 256, 70, 64
	_, _, _, p := packedFixture(t, r, n, k, gs)
	for _, bad := range []float32{float32(math.Inf(-1)), float32(math.NaN())} {
		x := randSlice(r, m*k)
		x[4*k+130] = bad
		out := make([]float32, m*n)
		if packedQ8Matmul(x, m, p, out) {
			t.Errorf("x with %v: the int8 kernel accepted it", bad)
		}
		if err := PackedQ4Matmul(x, m, p, out); err != nil {
			t.Fatal(err)
		}
		for j, v := range out[4*n : 5*n] {
			if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
				t.Fatalf("row with %v: out[%d] = %v is finite", bad, j, v)
			}
		}
	}
}

// withoutPQ8 holds PackedQ4Matmul to the exact-x kernels for the length of
// a test, which holds them to float32 rounding.
func withoutPQ8(t testing.TB) {
	old := pq8Use
	pq8Use = func(int) bool { return false }
	t.Cleanup(func() { pq8Use = old })
}
