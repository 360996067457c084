package nn

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
)

// deltaCase is one random input to the gated delta rule, held in float64
// for the reference and handed to mlx as float32.
type deltaCase struct {
	b, h, l, dk, dv int
	q, k, v         []float64 // [B, H, L, D]
	g, beta         []float64 // [B, H, L]
	s0              []float64 // [B, H, Dk, Dv]
}

// newDeltaCase draws keys and queries of unit norm (queries then scaled
// by 1/sqrt(Dk)), decays g in [gMin, 0] and β in (0, 1), as the layer
// produces them, and a non-zero starting state.
func newDeltaCase(seed uint64, b, h, l, dk, dv int, gMin float64) *deltaCase {
	rng := rand.New(rand.NewPCG(seed, 7))
	c := &deltaCase{b: b, h: h, l: l, dk: dk, dv: dv}
	unit := func(n, d int, scale float64) []float64 {
		x := make([]float64, n*d)
		for i := 0; i < n; i++ {
			norm := 0.0
			for j := 0; j < d; j++ {
				x[i*d+j] = rng.NormFloat64()
				norm += x[i*d+j] * x[i*d+j]
			}
			for j := 0; j < d; j++ {
				x[i*d+j] *= scale / math.Sqrt(norm)
			}
		}
		return x
	}
	n := b * h * l
	c.q, c.k = unit(n, dk, 1/math.Sqrt(float64(dk))), unit(n, dk, 1)
	c.v = make([]float64, n*dv)
	for i := range c.v {
		c.v[i] = rng.NormFloat64()
	}
	c.g, c.beta = make([]float64, n), make([]float64, n)
	for i := range c.g {
		c.g[i] = gMin * rng.Float64()
		c.beta[i] = 1 / (1 + math.Exp(-2*rng.NormFloat64()))
	}
	c.s0 = make([]float64, b*h*dk*dv)
	for i := range c.s0 {
		c.s0[i] = 0.3 * rng.NormFloat64()
	}
	return c
}

// reference is the recurrence in float64, written from its definition:
// S = e^g S; u = β (v - Sᵀk); S += k uᵀ; o = Sᵀq.
func (c *deltaCase) reference() (out, state []float64) {
	out = make([]float64, c.b*c.h*c.l*c.dv)
	state = append([]float64(nil), c.s0...)
	for bh := 0; bh < c.b*c.h; bh++ {
		S := state[bh*c.dk*c.dv : (bh+1)*c.dk*c.dv]
		for t := 0; t < c.l; t++ {
			i := bh*c.l + t
			k, q, v := c.k[i*c.dk:(i+1)*c.dk], c.q[i*c.dk:(i+1)*c.dk], c.v[i*c.dv:(i+1)*c.dv]
			a := math.Exp(c.g[i])
			for j := range S {
				S[j] *= a
			}
			for e := 0; e < c.dv; e++ {
				pred := 0.0
				for d := 0; d < c.dk; d++ {
					pred += S[d*c.dv+e] * k[d]
				}
				u := c.beta[i] * (v[e] - pred)
				for d := 0; d < c.dk; d++ {
					S[d*c.dv+e] += k[d] * u
				}
			}
			for e := 0; e < c.dv; e++ {
				o := 0.0
				for d := 0; d < c.dk; d++ {
					o += S[d*c.dv+e] * q[d]
				}
				out[i*c.dv+e] = o
			}
		}
	}
	return out, state
}

func f32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func (c *deltaCase) arrays() (q, k, v, g, beta, s0 *mlx.Array) {
	return mlx.FromSlice(f32(c.q), c.b, c.h, c.l, c.dk), mlx.FromSlice(f32(c.k), c.b, c.h, c.l, c.dk),
		mlx.FromSlice(f32(c.v), c.b, c.h, c.l, c.dv), mlx.FromSlice(f32(c.g), c.b, c.h, c.l),
		mlx.FromSlice(f32(c.beta), c.b, c.h, c.l), mlx.FromSlice(f32(c.s0), c.b, c.h, c.dk, c.dv)
}

func diff64(got []float32, want []float64) float64 {
	d := 0.0
	for i := range want {
		d = math.Max(d, math.Abs(float64(got[i])-want[i]))
	}
	return d
}

// The step-by-step recurrence and the chunked form (several chunk
// lengths, including ones that leave a short last chunk, and chunks split
// across calls carrying the state) both equal a float64 reference of the
// recurrence: outputs at every position and the final state.
func TestGatedDeltaMatchesFloat64Recurrence(t *testing.T) {
	mlxtest.NoLeaks(t)
	for _, tc := range []struct {
		name string
		gMin float64
	}{{"mild decay", -1}, {"strong decay", -30}} {
		sc := mlx.NewScope()
		c := newDeltaCase(3, 2, 3, 37, 8, 6, tc.gMin)
		wantOut, wantState := c.reference()
		q, k, v, g, beta, s0 := c.arrays()
		check := func(name string, o, s *mlx.Array) {
			t.Helper()
			if d := diff64(o.Float32s(), wantOut); d > 2e-5 || math.IsNaN(d) {
				t.Errorf("%s, %s: outputs differ from the float64 recurrence by %g", tc.name, name, d)
			}
			if d := diff64(s.Float32s(), wantState); d > 2e-5 || math.IsNaN(d) {
				t.Errorf("%s, %s: final state differs from the float64 recurrence by %g", tc.name, name, d)
			}
			mlx.Free(o, s)
		}
		o, s := GatedDeltaStep(q, k, v, g, beta, s0)
		check("step", o, s)
		for _, chunk := range []int{1, 2, 5, 16, 37, 64} {
			o, s := GatedDeltaChunked(q, k, v, g, beta, s0, chunk)
			check("chunk "+strconv.Itoa(chunk), o, s)
		}
		// two calls, the state carried between them, as prefill chunks are
		part := func(a *mlx.Array, from, to int) *mlx.Array { return mlx.SliceAxis(a, 2, from, to) }
		o1, s1 := GatedDeltaChunked(part(q, 0, 20), part(k, 0, 20), part(v, 0, 20), part(g, 0, 20), part(beta, 0, 20), s0, 8)
		o2, s2 := GatedDeltaChunked(part(q, 20, 37), part(k, 20, 37), part(v, 20, 37), part(g, 20, 37), part(beta, 20, 37), s1, 8)
		check("two calls", mlx.Concatenate([]*mlx.Array{o1, o2}, 2), s2)
		mlx.Free(o1, s1, o2)
		mlx.Free(q, k, v, g, beta, s0)
		sc.Close()
	}
}

// Repeated keys with full write strength and almost no decay make the
// chunk's triangular system as ill-conditioned as it gets (A is nearly
// all ones below the diagonal, its inverse's Neumann series cancels
// binomially large terms): the chunked form must still equal the
// recurrence, at every chunk length.
func TestGatedDeltaRepeatedKeys(t *testing.T) {
	mlxtest.NoLeaks(t)
	for _, beta := range []float64{1, 0.9, 0.5} {
		c := newDeltaCase(5, 1, 2, 150, 16, 8, -0.001)
		for bh := 0; bh < c.b*c.h; bh++ {
			for i := 1; i < c.l; i++ {
				copy(c.k[(bh*c.l+i)*c.dk:(bh*c.l+i+1)*c.dk], c.k[bh*c.l*c.dk:(bh*c.l+1)*c.dk])
				c.beta[bh*c.l+i] = beta
			}
		}
		want, wantState := c.reference()
		q, k, v, g, b, s0 := c.arrays()
		for _, chunk := range []int{8, 16, 64, 150} {
			o, s := GatedDeltaChunked(q, k, v, g, b, s0, chunk)
			if d := diff64(o.Float32s(), want); d > 2e-5 || math.IsNaN(d) {
				t.Errorf("β %v, chunk %d: outputs differ from the recurrence by %g", beta, chunk, d)
			}
			if d := diff64(s.Float32s(), wantState); d > 2e-5 || math.IsNaN(d) {
				t.Errorf("β %v, chunk %d: state differs from the recurrence by %g", beta, chunk, d)
			}
			mlx.Free(o, s)
		}
		mlx.Free(q, k, v, g, b, s0)
	}
}

// Softplus and L2Normalize against their definitions, including inputs
// where the naive log(1 + e^x) would overflow.
func TestSoftplusAndL2Normalize(t *testing.T) {
	mlxtest.NoLeaks(t)
	xs := []float32{-100, -5, -0.5, 0, 0.5, 5, 100}
	x := mlx.FromSlice(xs, len(xs))
	sp := Softplus(x)
	for i, got := range sp.Float32s() {
		v := float64(xs[i])
		want := math.Max(v, 0) + math.Log1p(math.Exp(-math.Abs(v)))
		if math.Abs(float64(got)-want) > 1e-6*math.Max(1, want) || got < 0 {
			t.Errorf("softplus(%v) = %v, want %v", v, got, want)
		}
	}
	y := mlx.FromSlice([]float32{3, 4, 0, 0}, 2, 2)
	n := L2Normalize(y, 1e-6)
	got := n.Float32s()
	if math.Abs(float64(got[0])-0.6) > 1e-6 || math.Abs(float64(got[1])-0.8) > 1e-6 || got[2] != 0 || got[3] != 0 {
		t.Errorf("l2 normalize: %v", got)
	}
	mlx.Free(x, sp, y, n)
}
