package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
)

// Fused projections give what the separate layers gave, dense or
// quantized, with biases; parts that cannot share a matmul stay apart.
func TestProjectionsFuse(t *testing.T) {
	mlxtest.NoLeaks(t)
	rng := rand.New(rand.NewPCG(5, 6))
	sizes := []int{64, 32, 32}
	x := randArray(rng, 2, 3, 128)
	defer x.Free()
	quant := func(out int) Layer {
		wf := randArray(rng, out, 128)
		defer wf.Free()
		p, s, b, err := mlx.Quantize(wf, 64, 4)
		if err != nil {
			t.Fatal(err)
		}
		return &QuantizedLinear{QuantWeight: QuantWeight{M: mlx.NewQuantMatrix(p, s, b, 64, 4)}, Bias: randArray(rng, out)}
	}
	dense := func(out int) Layer { return &Linear{Weight: randArray(rng, out, 128), Bias: randArray(rng, out)} }
	for _, c := range []struct {
		name  string
		parts func() []Layer
		fused bool
	}{
		{"dense", func() []Layer { return []Layer{dense(64), dense(32), dense(32)} }, true},
		{"quantized", func() []Layer { return []Layer{quant(64), quant(32), quant(32)} }, true},
		{"mixed", func() []Layer { return []Layer{quant(64), dense(32), quant(32)} }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &Weights{}
			parts := c.parts()
			var want []*mlx.Array
			for _, l := range parts {
				want = append(want, l.Forward(x))
				for _, a := range arraysOf(l) {
					w.track(a)
				}
			}
			p := w.Projections(parts, sizes)
			if (p.fused != nil) != c.fused {
				t.Fatalf("fused = %v, want %v", p.fused != nil, c.fused)
			}
			got := p.Forward(x)
			for i := range want {
				// One matmul over the joined weights may sum in another
				// order than the part's own (the portable Go GEMM blocks
				// by the output width): float32 rounding of the outputs'
				// size, not an absolute 1e-5.
				bound := 1e-6 * (1 + maxAbs(want[i]))
				if d := maxAbsDiff(got[i], want[i]); d > bound {
					t.Errorf("part %d differs by %g (bound %g)", i, d, bound)
				}
			}
			mlx.Free(append(got, want...)...)
			for _, a := range w.Loaded() {
				a.Free()
			}
		})
	}
}

func arraysOf(l Layer) []*mlx.Array {
	switch l := l.(type) {
	case *Linear:
		return []*mlx.Array{l.Weight, l.Bias}
	case *QuantizedLinear:
		return append(l.M.Arrays(), l.Bias)
	}
	return nil
}

func maxAbs(a *mlx.Array) float64 {
	m := 0.0
	for _, v := range a.Float32s() {
		m = max(m, math.Abs(float64(v)))
	}
	return m
}
