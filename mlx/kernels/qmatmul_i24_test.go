//go:build cgo && amd64

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func needI24(t *testing.T) {
	t.Helper()
	if !q4i24Applies(128, 64) {
		t.Skipf("the CPU lacks AVX-512 VNNI (%s); the 4-bit integer kernel does not run here", Features())
	}
}

// wideX has, in every 64-value half-block, magnitudes from 1e-7 to 1e3,
// exact zeros, subnormals and both signs, the cases where a fixed-point
// form of x could lose the small values next to a large one.
func wideX(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch i % 11 {
		case 0:
			x[i] = 0
		case 1:
			x[i] = float32(r.NormFloat64()) * 1e3
		case 2:
			x[i] = math.Float32frombits(uint32(r.IntN(1 << 23))) // subnormal
		default:
			x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(10)-7)))
		}
	}
	return x
}

// TestQ4I24Digits checks the fixed-point form of x value by value: the
// digits are in int8 range and s·(a·2^16 + b·2^8 + c)/2^16 is within
// s·2^-17 of x, where s is a power of two of at most max|x|/63.5.
func TestQ4I24Digits(t *testing.T) {
	needI24(t)
	r := rand.New(rand.NewPCG(21, 22))
	const m, k = 2, 512
	x := wideX(r, m*k)
	x[5] = 127.0 * 4 // a value exactly at the top of the digit range
	d, sv, ok := q4i24Digits(x, m, k)
	if !ok {
		t.Fatal("finite x refused")
	}
	for i := range m {
		for v := range k {
			blk, in := (i*k+v)/128, v%128
			half, even := in/64, in%2 == 0
			at := blk*384 + in/2
			if !even {
				at += 64
			}
			a, b, c := int64(d[at]), int64(d[at+128]), int64(d[at+256])
			s := float64(sv[blk*16+half*8]) * 65536
			if frac, _ := math.Frexp(s); frac != 0.5 {
				t.Fatalf("row %d value %d: scale %g is not a power of two", i, v, s)
			}
			got := s * float64(a*65536+b*256+c) / 65536
			if diff := math.Abs(got - float64(x[i*k+v])); diff > s*math.Pow(2, -17) {
				t.Fatalf("row %d value %d: %g represented as %g (a=%d b=%d c=%d, s=%g)", i, v, x[i*k+v], got, a, b, c, s)
			}
		}
	}
}

// TestQ4I24MatchesReference runs the integer kernel on the decode shapes
// of real models and on wide-range x; it must meet the same float64
// tolerance as the float kernels, for every row count it handles at once.
func TestQ4I24MatchesReference(t *testing.T) {
	needI24(t)
	r := rand.New(rand.NewPCG(23, 24))
	for _, sh := range [][2]int{{128, 40}, {896, 131}, {4864, 33}} {
		for _, gs := range []int{64, 128} {
			for _, m := range []int{1, 2, 3, 4, 5} {
				k, n := sh[0], sh[1]
				if !q4i24Applies(k, gs) {
					t.Fatalf("k=%d gs=%d: integer kernel does not apply", k, gs)
				}
				packed, scales, biases, err := Quantize(randSlice(r, n*k), n, k, gs, 4)
				if err != nil {
					t.Fatal(err)
				}
				q := qmat{packed, scales, biases, gs, 4}
				for xi, x := range [][]float32{randSlice(r, m*k), wideX(r, m*k)} {
					want, mag := refQMatmul(x, m, k, n, packed, scales, biases, gs, 4, true)
					out := make([]float32, m*n)
					qmatmulTC(x, m, k, n, q, out, 0)
					assertClose(t, fmt.Sprintf("k%d_g%d_m%d_x%d", k, gs, m, xi), out, want, mag, 1e-5)
				}
			}
		}
	}
}

// TestQ4I24NonFinite: fixed point cannot hold Inf or NaN, so such an x
// must go to the float kernel and give exactly its results.
func TestQ4I24NonFinite(t *testing.T) {
	needI24(t)
	r := rand.New(rand.NewPCG(25, 26))
	const m, k, n, gs = 2, 256, 70, 64
	packed, scales, biases, err := Quantize(randSlice(r, n*k), n, k, gs, 4)
	if err != nil {
		t.Fatal(err)
	}
	q := qmat{packed, scales, biases, gs, 4}
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN())} {
		x := randSlice(r, m*k)
		x[k+77] = bad
		if _, _, ok := q4i24Digits(x, m, k); ok {
			t.Fatalf("x holding %v accepted as fixed point", bad)
		}
		got, want := make([]float32, m*n), make([]float32, m*n)
		qmatmulTC(x, m, k, n, q, got, 0)
		qmatmulTC(x, m, k, n, q, want, 3)
		if !bitsEqualF(got, want) {
			t.Errorf("x holding %v: results differ from the float kernel", bad)
		}
	}
}
