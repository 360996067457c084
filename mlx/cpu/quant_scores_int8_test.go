package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"hark/mlx"
)

// int8Scores is the float64 model of the int8 scores
// (hark_qattn_scores_vnni) for one head q against key row kr of codes c
// with group scales s and biases b: q quantized per group of g with step
// max|q|/step, rounded to nearest. It returns the score the kernel should
// give up to float32 rounding, the magnitude of the terms that rounding
// applies to, and the bound on its distance from the exact score
// (scale · Σ_groups |s|·(qd/2)·Σ|c - mid|, the term the kernel drops,
// mid the middle of the codes' range).
func int8Scores(q []float64, c []int, s, b []float64, g, bits int, step, scale float64) (model, mag, bound float64) {
	for gg := range s {
		amax, sum := 0.0, 0.0
		for _, x := range q[gg*g : (gg+1)*g] {
			amax, sum = max(amax, math.Abs(x)), sum+x
		}
		qd, mid := amax/step, 1<<(bits-1)
		var dot, delta, dev float64
		for i := gg * g; i < (gg+1)*g; i++ {
			qi := 0.0
			if amax > 0 {
				qi = math.RoundToEven(q[i] / qd)
			}
			dot += qi * float64(c[i])
			delta += q[i] - qd*qi
			dev += math.Abs(float64(c[i] - mid))
		}
		t := [3]float64{s[gg] * qd * dot, s[gg] * float64(mid) * delta, b[gg] * sum}
		model += scale * (t[0] + t[1] + t[2])
		mag += scale * (math.Abs(t[0]) + math.Abs(t[1]) + math.Abs(t[2]))
		bound += scale * math.Abs(s[gg]) * qd / 2 * dev // MLX scales can be negative
	}
	return model, mag, bound
}

// keyCodes is row j of head (bi, h) as its codes and its groups' scales
// and biases.
func keyCodes(k mlx.QuantizedKV, bi, h, j, g, bits int) (codes []int, s, b []float64) {
	dims := k.Packed.Dims()
	hs, capacity, words := dims[1], dims[2], dims[3]
	d, per, row := words*32/bits, 32/bits, (bi*hs+h)*capacity+j
	kp, ks, kb := k.Packed.Uint32s(), k.Scales.Float32s(), k.Biases.Float32s()
	codes = make([]int, d)
	for i := range codes {
		codes[i] = int(kp[row*words+i/per] >> (uint(i%per) * uint(bits)) & (1<<bits - 1))
	}
	for gg := range d / g {
		s, b = append(s, float64(ks[row*(d/g)+gg])), append(b, float64(kb[row*(d/g)+gg]))
	}
	return codes, s, b
}

// TestQuantizedScoresInt8: where the CPU has AVX-512 VNNI, the scores of
// the quantized decode kernel take q as int8 per group. They agree within
// float32 rounding with a float64 model of that quantization (a step of
// max|q|/127, to nearest), and with the exact scores within the bound the
// dropped term allows. The model with a step of max|q|/126 instead must be
// told apart, so a wrong quantization of q cannot pass.
func TestQuantizedScoresInt8(t *testing.T) {
	defer func(v bool) { qVNNI = v }(qVNNI)
	qVNNI = qVNNIOK
	if !qDot(64) {
		t.Skip("no AVX-512 VNNI: the scores stay in float32")
	}
	defer checkNoLeaks(t, mlx.LiveArrays())
	r := rand.New(rand.NewPCG(11, 19))
	type tc struct{ rep, d, n, g, bits int }
	var cases []tc
	for _, bits := range []int{8, 4} {
		for _, g := range []int{32, 64, 128} {
			cases = append(cases, tc{7, 128, 333, g, bits}, tc{1, 128, 17, g, bits}, tc{12, 128, 40, g, bits})
		}
		cases = append(cases, tc{7, 64, 129, 64, bits}, tc{3, 96, 31, 32, bits}, tc{4, 64, 1, 32, bits})
	}
	for _, c := range cases {
		name := fmt.Sprintf("%+v", c)
		k := quantSide(t, r, 1, 1, c.n, c.d, c.g, c.bits)
		kp, ks, kb := k.Packed.Uint32s(), k.Scales.Float32s(), k.Biases.Float32s()
		q := randF32(r, c.rep*c.d)
		scale := float32(1 / math.Sqrt(float64(c.d)))
		sc := make([]float32, c.rep*c.n)
		qScores(q, c.rep, c.d, c.n, c.g, c.bits, scale, kp, ks, kb, make([]float32, qScratch(c.rep, c.d, c.g)), sc)
		planted := 0
		for h := range c.rep {
			qh := make([]float64, c.d)
			for i := range qh {
				qh[i] = float64(q[h*c.d+i])
			}
			for j := range c.n {
				codes, s, b := keyCodes(k, 0, 0, j, c.g, c.bits)
				kr := dequant64(k, 0, 0, j, c.g, c.bits)
				var exact float64
				for i, x := range kr {
					exact += qh[i] * x
				}
				exact *= float64(scale)
				model, mag, bound := int8Scores(qh, codes, s, b, c.g, c.bits, 127, float64(scale))
				got := float64(sc[h*c.n+j])
				round := 1e-5*mag + 1e-6
				if d := math.Abs(got - model); !(d <= round) {
					t.Fatalf("%s: head %d key %d: %v, int8 model %v (off by %.3g, rounding allows %.3g)", name, h, j, got, model, d, round)
				}
				if d := math.Abs(got - exact); !(d <= bound+round) {
					t.Fatalf("%s: head %d key %d: %v, exact %v (off by %.3g, bound %.3g)", name, h, j, got, exact, d, bound+round)
				}
				if wrong, _, _ := int8Scores(qh, codes, s, b, c.g, c.bits, 126, float64(scale)); math.Abs(got-wrong) > round {
					planted++
				}
			}
		}
		if planted == 0 {
			t.Fatalf("%s: no score tells a step of max|q|/126 from max|q|/127", name)
		}
		mlx.Free(k.Packed, k.Scales, k.Biases)
	}
}
