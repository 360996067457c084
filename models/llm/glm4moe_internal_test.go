package llm

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
	"hark/models/nn"
)

// One GLM-4.5 decoder layer (a MoE one) against a float64 pass written
// from transformers' Glm4MoeAttention, Glm4MoeTopkRouter and Glm4MoeMoE,
// reading the checkpoint's own values: q/k/v with biases, per-head q/k
// RMSNorm, RoPE over the first half of each head in split halves at
// theta^(-2i/rotary dims), causal GQA, o_proj without a bias; then sigmoid
// scores, experts chosen by score + e_score_correction_bias among the
// topk_group best of n_group groups (a group's two best summed, the rest
// masked to 0), weighted by the unbiased score, renormalised (+1e-20),
// scaled by routed_scaling_factor, plus the shared expert. The bias and
// the group limit must each change some token's choice here, so a router
// that ignored either would fail.
func TestGLM4MoeLayerMatchesFloat64(t *testing.T) {
	mlxtest.NoLeaks(t)
	s := llmtest.Tiny
	const experts, topK, groups, topGroups, scale, eps = 8, 2, 4, 2, 1.8, 1e-5
	gen := llmtest.GLM4Moe(s, experts, topK, true)
	gen.Config["n_group"], gen.Config["topk_group"] = groups, topGroups
	dir := t.TempDir()
	if err := gen.Write(dir, 11, llmtest.Quant{}); err != nil {
		t.Fatal(err)
	}
	m, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l := m.(*llama).layers[1]
	if moe, ok := l.mlp.(*sparseMoE); !ok || !moe.sigmoid || moe.groups != groups {
		t.Fatalf("layer 1 is not a group-limited sigmoid MoE block: %T", l.mlp)
	}
	read := checkpoint64(t, dir)
	// y = W x (+ b), W [out, in] row-major
	linear := func(w, b, x []float64) []float64 {
		y := make([]float64, len(w)/len(x))
		for i := range y {
			for j, xj := range x {
				y[i] += w[i*len(x)+j] * xj
			}
			if b != nil {
				y[i] += b[i]
			}
		}
		return y
	}
	rms := func(x, w []float64) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		r := 1 / math.Sqrt(ss/float64(len(x))+eps)
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = v * r * w[i]
		}
		return y
	}
	mlp := func(pre string, x []float64) []float64 {
		g, u := linear(read(pre+"gate_proj.weight"), nil, x), linear(read(pre+"up_proj.weight"), nil, x)
		for i := range g {
			g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
		}
		return linear(read(pre+"down_proj.weight"), nil, g)
	}
	const p, a = "model.layers.1.", "model.layers.1.self_attn."
	d, rot := s.HeadDim, s.HeadDim/2
	// heads of one position, normed and rotated: [n][d]
	heads := func(proj, normW string, n, pos int, rotate bool, x []float64) [][]float64 {
		flat := linear(read(a+proj+".weight"), read(a+proj+".bias"), x)
		out := make([][]float64, n)
		for h := range out {
			v := append([]float64(nil), flat[h*d:(h+1)*d]...)
			if normW != "" {
				v = rms(v, read(a+normW+".weight"))
			}
			for i := 0; rotate && i < rot/2; i++ {
				ang := float64(pos) * math.Pow(10000, -float64(2*i)/float64(rot))
				x1, x2 := v[i], v[i+rot/2]
				v[i], v[i+rot/2] = x1*math.Cos(ang)-x2*math.Sin(ang), x2*math.Cos(ang)+x1*math.Sin(ang)
			}
			out[h] = v
		}
		return out
	}

	const tokens = 12
	xs := normalInputs(4, 5, tokens*s.Hidden)
	x := mlx.FromSlice(xs, 1, tokens, s.Hidden)
	c := nn.NewKVCache()
	y := l.forward(x, c)
	got := y.Float32s()
	mlx.Free(x, y)
	c.Free()

	var qs, ks, vs [][][]float64
	var res [][]float64
	for pos := 0; pos < tokens; pos++ {
		xt := make([]float64, s.Hidden)
		for j := range xt {
			xt[j] = float64(xs[pos*s.Hidden+j])
		}
		res = append(res, xt)
		xn := rms(xt, read(p+"input_layernorm.weight"))
		qs = append(qs, heads("q_proj", "q_norm", s.Heads, pos, true, xn))
		ks = append(ks, heads("k_proj", "k_norm", s.KVHeads, pos, true, xn))
		vs = append(vs, heads("v_proj", "", s.KVHeads, pos, false, xn))
	}
	router, bias := read(p+"mlp.gate.weight"), read(p+"mlp.gate.e_score_correction_bias")
	biasMatters, groupsMatter := false, false
	worst := 0.0
	for pos := 0; pos < tokens; pos++ {
		ctx := make([]float64, 0, s.Heads*d)
		for h := 0; h < s.Heads; h++ {
			kh := h / (s.Heads / s.KVHeads)
			w := make([]float64, pos+1)
			top := math.Inf(-1)
			for j := range w {
				for i := 0; i < d; i++ {
					w[j] += qs[pos][h][i] * ks[j][kh][i]
				}
				w[j] /= math.Sqrt(float64(d))
				top = math.Max(top, w[j])
			}
			var sum float64
			for j := range w {
				w[j] = math.Exp(w[j] - top)
				sum += w[j]
			}
			o := make([]float64, d)
			for j := range w {
				for i := range o {
					o[i] += w[j] / sum * vs[j][kh][i]
				}
			}
			ctx = append(ctx, o...)
		}
		h := linear(read(a+"o_proj.weight"), nil, ctx)
		for i := range h {
			h[i] += res[pos][i]
		}
		hn := rms(h, read(p+"post_attention_layernorm.weight"))
		scores := sigmoidScores(router, hn)
		chosen := groupTopExperts(scores, bias, topK, groups, topGroups)
		if fmt.Sprint(chosen) != fmt.Sprint(groupTopExperts(scores, nil, topK, groups, topGroups)) {
			biasMatters = true
		}
		if fmt.Sprint(chosen) != fmt.Sprint(groupTopExperts(scores, bias, topK, 1, 1)) {
			groupsMatter = true
		}
		var sum float64
		for _, e := range chosen {
			sum += scores[e]
		}
		out := mlp(p+"mlp.shared_experts.", hn)
		for _, e := range chosen {
			ye := mlp(fmt.Sprintf("%smlp.experts.%d.", p, e), hn)
			for i := range out {
				out[i] += scores[e] / (sum + 1e-20) * scale * ye[i]
			}
		}
		for i := range out {
			worst = math.Max(worst, math.Abs(float64(got[pos*s.Hidden+i])-(h[i]+out[i])))
		}
	}
	if worst > 1e-4 {
		t.Errorf("decoder layer differs from the float64 reference by %g", worst)
	}
	if !biasMatters || !groupsMatter {
		t.Fatalf("router bias changes a choice: %v, group limit changes a choice: %v; the test cannot tell both are read", biasMatters, groupsMatter)
	}
}
