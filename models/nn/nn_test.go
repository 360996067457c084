package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
)

func randArray(rng *rand.Rand, shape ...int) *mlx.Array {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return mlx.FromSlice(v, shape...)
}

func maxAbsDiff(a, b *mlx.Array) float64 {
	x, y := a.Float32s(), b.Float32s()
	d := 0.0
	for i := range x {
		d = math.Max(d, math.Abs(float64(x[i]-y[i])))
	}
	return d
}

// The step-by-step soft-capped path must be the fused kernel when the cap
// is too large to bend anything: same GQA head mapping, same window mask.
func TestSoftcapAttentionMatchesFused(t *testing.T) {
	mlxtest.NoLeaks(t)
	rng := rand.New(rand.NewPCG(1, 2))
	s := mlx.NewScope()
	defer s.Close()
	q, k, v := randArray(rng, 1, 4, 5, 8), randArray(rng, 1, 2, 9, 8), randArray(rng, 1, 2, 9, 8)
	mask := mlx.Mask{Causal: true, Window: 3}
	fused := mlx.ScaledDotProductAttention(q, k, v, 0.35, mask)
	capped := Attention(q, k, v, 0.35, mask, 1e6)
	if d := maxAbsDiff(fused, capped); d > 1e-5 {
		t.Fatalf("soft-capped path differs from the fused kernel by %g", d)
	}
	// and a small cap does change the result
	if d := maxAbsDiff(fused, Attention(q, k, v, 0.35, mask, 0.5)); d < 1e-3 {
		t.Fatalf("cap 0.5 changed nothing (%g)", d)
	}
}

// Linear rope scaling by 2 turns position p into p/2.
func TestLinearRopeScaling(t *testing.T) {
	mlxtest.NoLeaks(t)
	rng := rand.New(rand.NewPCG(3, 4))
	x := randArray(rng, 1, 1, 1, 8)
	defer x.Free()
	plain, err := NewRoPE(8, 10000, false, nil, 128)
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := NewRoPE(8, 10000, false, &RopeScaling{Type: "linear", Factor: 2}, 128)
	if err != nil {
		t.Fatal(err)
	}
	a, b := plain.Forward(x, 3), scaled.Forward(x, 6)
	defer mlx.Free(a, b)
	if d := maxAbsDiff(a, b); d > 1e-5 {
		t.Fatalf("scaled position 6 differs from plain position 3 by %g", d)
	}
	if _, err := NewRoPE(8, 10000, false, &RopeScaling{Type: "dynamic", Factor: 2}, 128); err == nil {
		t.Fatal("dynamic rope scaling accepted")
	}
	y, err := NewRoPE(8, 10000, false, &RopeScaling{Type: "yarn", Factor: 4, OriginalMaxPos: 64}, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if want := float32(0.1*math.Log(4) + 1); math.Abs(float64(y.params.MScale-want)) > 1e-6 {
		t.Fatalf("yarn attention factor %v, want %v", y.params.MScale, want)
	}
}

func TestKVCacheGrowTrimSnapshot(t *testing.T) {
	mlxtest.NoLeaks(t)
	c := NewKVCache()
	var all []float32
	step := func(n int) {
		v := make([]float32, 2*n*3)
		for i := range v {
			v[i] = float32(len(all) + i)
		}
		// rows are [B=1, H=2, n, D=3]: record the expected per-head order
		all = append(all, v...)
		k := mlx.FromSlice(v, 1, 2, n, 3)
		ok, ov := c.Update(k, k)
		if ok.Dim(2) != c.Offset() || ov.Dim(2) != c.Offset() {
			t.Fatalf("cache returned %v for offset %d", ok.Shape(), c.Offset())
		}
		mlx.Free(k, ok, ov)
	}
	for i := 0; i < 100; i++ { // crosses growStep several times in 3-token steps
		step(3)
	}
	if c.Offset() != 300 {
		t.Fatalf("offset %d", c.Offset())
	}
	snap := c.Snapshot()
	if !c.Trim(299) || c.Offset() != 1 || c.Trim(2) {
		t.Fatalf("trim: offset %d", c.Offset())
	}
	if err := c.Restore(snap); err != nil || c.Offset() != 300 {
		t.Fatalf("restore: %v offset %d", err, c.Offset())
	}
	// the last update's head 1 must hold what was written there
	k := mlx.Zeros([]int{1, 2, 1, 3}, mlx.Float32)
	ok, ov := c.Update(k, k)
	got := ok.Float32s()
	last := all[len(all)-2*3*3:] // final 3-token update, [2][3][3]
	for d := 0; d < 3; d++ {
		want := last[3*3+2*3+d]      // head 1, token 2
		have := got[(1*301+299)*3+d] // head 1, position 299
		if have != want {
			t.Fatalf("head 1 position 299 dim %d: %v, want %v", d, have, want)
		}
	}
	mlx.Free(k, ok, ov)
}

// longrope with unit factors and no attention scaling is plain RoPE; a
// factor of 2 on every pair is linear scaling by 2.
func TestLongRopeFrequencies(t *testing.T) {
	mlxtest.NoLeaks(t)
	rng := rand.New(rand.NewPCG(5, 6))
	x := randArray(rng, 1, 1, 1, 8)
	defer x.Free()
	one := 1.0
	plain, _ := NewRoPE(8, 10000, false, nil, 128)
	unit, err := NewRoPE(8, 10000, false, &RopeScaling{Type: "longrope", LongFactor: []float64{1, 1, 1, 1}, OriginalMaxPos: 32, AttentionFactor: &one}, 128)
	if err != nil {
		t.Fatal(err)
	}
	double, _ := NewRoPE(8, 10000, false, &RopeScaling{Type: "longrope", LongFactor: []float64{2, 2, 2, 2}, OriginalMaxPos: 32, AttentionFactor: &one}, 128)
	defer unit.Close()
	defer double.Close()
	a, b, c := plain.Forward(x, 5), unit.Forward(x, 5), double.Forward(x, 10)
	defer mlx.Free(a, b, c)
	if d := maxAbsDiff(a, b); d > 1e-5 {
		t.Fatalf("unit longrope differs from plain rope by %g", d)
	}
	if d := maxAbsDiff(a, c); d > 1e-5 {
		t.Fatalf("longrope factor 2 at position 10 differs from plain at 5 by %g", d)
	}
	if _, err := NewRoPE(8, 10000, false, &RopeScaling{Type: "longrope", LongFactor: []float64{1, 1}, OriginalMaxPos: 32}, 128); err == nil {
		t.Fatal("accepted a long_factor of the wrong length")
	}
	s, _ := NewRoPE(8, 10000, false, &RopeScaling{Type: "longrope", LongFactor: []float64{1, 1, 1, 1}, OriginalMaxPos: 32}, 128)
	defer s.Close()
	if want := math.Sqrt(1 + math.Log(4)/math.Log(32)); math.Abs(float64(s.params.MScale)-want) > 1e-6 {
		t.Fatalf("longrope scale %v, want %v", s.params.MScale, want)
	}
}
