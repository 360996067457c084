package mlx_test

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
)

// refSDPA is attention from the definition in float64; maskAt returns the
// additive mask for (b, h, i, j) (-Inf hides the key).
func refSDPA(q, k, v []float32, B, Hq, Hkv, Lq, Lk, D, Dv int, scale float64, maskAt func(b, h, i, j int) float64) []float64 {
	out := make([]float64, B*Hq*Lq*Dv)
	G := Hq / Hkv
	for b := 0; b < B; b++ {
		for h := 0; h < Hq; h++ {
			kh := h / G
			for i := 0; i < Lq; i++ {
				s := make([]float64, Lk)
				m := math.Inf(-1)
				for j := 0; j < Lk; j++ {
					dot := 0.0
					for d := 0; d < D; d++ {
						dot += float64(q[((b*Hq+h)*Lq+i)*D+d]) * float64(k[((b*Hkv+kh)*Lk+j)*D+d])
					}
					s[j] = dot*scale + maskAt(b, h, i, j)
					m = math.Max(m, s[j])
				}
				if math.IsInf(m, -1) {
					continue // fully masked row: zeros
				}
				sum := 0.0
				for j := range s {
					s[j] = math.Exp(s[j] - m)
					sum += s[j]
				}
				for j := range s {
					for d := 0; d < Dv; d++ {
						out[((b*Hq+h)*Lq+i)*Dv+d] += s[j] / sum * float64(v[((b*Hkv+kh)*Lk+j)*Dv+d])
					}
				}
			}
		}
	}
	return out
}

func TestSDPA(t *testing.T) {
	leakFree(t)
	r := newRNG(40)
	type tc struct {
		B, Hq, Hkv, Lq, Lk, D, Dv int
		causal                    bool
		window                    int
		mask                      string // "", "bool", "add"
	}
	cases := []tc{
		{1, 1, 1, 1, 1, 8, 8, false, 0, ""},
		{1, 4, 4, 5, 5, 16, 16, true, 0, ""},
		{2, 8, 2, 3, 11, 8, 12, true, 0, ""},    // GQA, keys longer than queries (cache), Dv != D
		{1, 6, 3, 1, 37, 64, 64, true, 0, ""},   // decode step
		{2, 14, 2, 1, 150, 64, 64, true, 0, ""}, // grouped decode over several key blocks, batch 2
		{1, 4, 2, 1, 70, 12, 20, true, 0, ""},   // grouped decode, head sizes not a multiple of 8
		{1, 4, 1, 7, 7, 8, 8, true, 3, ""},      // sliding window
		{1, 2, 2, 4, 9, 8, 8, true, 4, ""},      // window with cache offset
		{2, 4, 2, 3, 6, 8, 8, false, 0, "bool"}, // explicit bool mask [Lq, Lk]
		{1, 4, 2, 3, 6, 8, 8, false, 0, "add"},  // additive mask [B,1,Lq,Lk]
		{1, 4, 2, 3, 6, 8, 8, true, 0, "add"},   // causal combined with a mask
		{1, 2, 1, 3, 5, 33, 17, false, 0, ""},   // odd sizes
		// Prefill sizes: several query blocks per head, so the CPU's
		// blocked path scores only the keys each block sees.
		{1, 14, 2, 150, 200, 64, 64, true, 0, ""}, // causal prefill after a cached prefix
		{1, 4, 2, 130, 130, 64, 64, true, 0, ""},  // causal prefill from position 0
		{1, 2, 1, 100, 100, 16, 16, true, 20, ""}, // sliding window over blocks
		{1, 2, 1, 70, 80, 8, 8, false, 0, "add"},  // explicit mask over blocks
		{2, 2, 2, 65, 65, 40, 24, false, 0, ""},   // no mask, batch 2, Dv != D
	}
	for _, c := range cases {
		qd := randSlice(r, c.B*c.Hq*c.Lq*c.D, -1, 1)
		kd := randSlice(r, c.B*c.Hkv*c.Lk*c.D, -1, 1)
		vd := randSlice(r, c.B*c.Hkv*c.Lk*c.Dv, -1, 1)
		q := mlx.FromSlice(qd, c.B, c.Hq, c.Lq, c.D)
		k := mlx.FromSlice(kd, c.B, c.Hkv, c.Lk, c.D)
		v := mlx.FromSlice(vd, c.B, c.Hkv, c.Lk, c.Dv)
		mask := mlx.Mask{Causal: c.causal, Window: c.window}
		var md []float32
		var mb []bool
		switch c.mask {
		case "bool":
			mb = make([]bool, c.Lq*c.Lk)
			for i := range mb {
				mb[i] = r.IntN(3) != 0
			}
			mask.Array = mlx.FromSlice(mb, c.Lq, c.Lk)
		case "add":
			md = randSlice(r, c.B*c.Lq*c.Lk, -2, 2)
			mask.Array = mlx.FromSlice(md, c.B, 1, c.Lq, c.Lk)
		}
		off := c.Lk - c.Lq
		maskAt := func(b, h, i, j int) float64 {
			if c.causal {
				if j > i+off || (c.window > 0 && j <= i+off-c.window) {
					return math.Inf(-1)
				}
			}
			switch c.mask {
			case "bool":
				if !mb[i*c.Lk+j] {
					return math.Inf(-1)
				}
			case "add":
				return float64(md[(b*c.Lq+i)*c.Lk+j])
			}
			return 0
		}
		scale := 1 / math.Sqrt(float64(c.D))
		o := mlx.ScaledDotProductAttention(q, k, v, float32(scale), mask)
		want := refSDPA(qd, kd, vd, c.B, c.Hq, c.Hkv, c.Lq, c.Lk, c.D, c.Dv, scale, maskAt)
		shapeEq(t, "SDPA", o, c.B, c.Hq, c.Lq, c.Dv)
		closeTo(t, fmt.Sprintf("SDPA %+v", c), o.Float32s(), want, 1e-5, 2e-6)
		// f16 inputs: output f16, computed in f32
		qh, kh, vh := mlx.AsType(q, mlx.Float16), mlx.AsType(k, mlx.Float16), mlx.AsType(v, mlx.Float16)
		oh := mlx.ScaledDotProductAttention(qh, kh, vh, float32(scale), mask)
		if oh.DType() != mlx.Float16 {
			t.Fatal("SDPA f16 dtype")
		}
		closeTo(t, fmt.Sprintf("SDPA f16 %+v", c), oh.Float32s(), want, 1e-2, 5e-3)
		mlx.Free(q, k, v, mask.Array, o, qh, kh, vh, oh)
	}
}

func TestCausalMaskHelper(t *testing.T) {
	leakFree(t)
	m := mlx.CreateCausalMask(2, 4, 0)
	w := mlx.CreateCausalMask(3, 3, 2)
	defer mlx.Free(m, w)
	if fmt.Sprint(m.Bools()) != "[true true true false true true true true]" {
		t.Fatalf("causal %v", m.Bools())
	}
	if fmt.Sprint(w.Bools()) != "[true false false true true false false true true]" {
		t.Fatalf("window %v", w.Bools())
	}
}
