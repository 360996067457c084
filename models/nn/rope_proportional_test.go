package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
)

// Proportional RoPE (Gemma 4's full layers) against a float64 reading of
// transformers' definition: over a head of d features, pair (i, i+d/2)
// turns at base^(-2i/d)/factor radians per position for i <
// floor(p*d/2), and the other pairs stay as they are.
func TestProportionalRoPE(t *testing.T) {
	mlxtest.NoLeaks(t)
	const d, heads, l, off = 32, 2, 5, 7
	for _, c := range []struct{ partial, factor float64 }{{0.25, 0}, {0.5, 2}, {1, 0}} {
		s := &RopeScaling{Type: "proportional", PartialRotaryFactor: c.partial, Factor: c.factor}
		r, err := NewRoPE(d, 1e6, false, s, 4096)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		x := randArray(rng, 1, heads, l, d)
		y := r.Forward(x, off)
		in, got := x.Float32s(), y.Float32s()
		factor := c.factor
		if factor == 0 {
			factor = 1
		}
		turning := int(c.partial * d / 2)
		worst := 0.0
		for row := 0; row < heads*l; row++ {
			pos := float64(off + row%l)
			for i := 0; i < d/2; i++ {
				a, b := float64(in[row*d+i]), float64(in[row*d+i+d/2])
				wa, wb := a, b
				if i < turning {
					th := pos / math.Pow(1e6, float64(2*i)/d) / factor
					wa, wb = a*math.Cos(th)-b*math.Sin(th), a*math.Sin(th)+b*math.Cos(th)
				}
				worst = math.Max(worst, math.Max(math.Abs(wa-float64(got[row*d+i])), math.Abs(wb-float64(got[row*d+i+d/2]))))
			}
		}
		if worst > 1e-5 {
			t.Errorf("partial %v factor %v: differs from the definition by %g", c.partial, c.factor, worst)
		}
		mlx.Free(x, y)
		r.Close()
	}
}

// An unknown rope type is refused naming the key it was read from and its
// value.
func TestRopeTypeErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct {
		s    *RopeScaling
		want string
	}{
		{&RopeScaling{Type: "dynamic", Factor: 2}, `rope_scaling.rope_type "dynamic"`},
		{&RopeScaling{LegacyType: "ntk", Factor: 2}, `rope_scaling.type "ntk"`},
		{(&RopeScaling{Type: "mrope"}).At("text_config.rope_parameters"), `text_config.rope_parameters.rope_type "mrope"`},
		{&RopeScaling{Type: "yarn"}, "rope_scaling.factor"},
	} {
		err := CheckRopeScaling(c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.s, err, c.want)
		}
	}
}
