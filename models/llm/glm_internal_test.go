package llm

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
)

// GLM-4.x MoE Lite's mixture-of-experts block against a float64 pass
// written from transformers' Glm4MoeLiteTopkRouter and Glm4MoeLiteMoE,
// reading the checkpoint's own values: sigmoid scores, experts chosen by
// score + e_score_correction_bias, weighted by the score alone,
// renormalised (sum + 1e-20) and scaled by routed_scaling_factor, plus
// the shared expert. The bias must change some token's choice here, so
// a router that ignored it (or took softmax) would fail.
func TestGLMMoEBlockMatchesFloat64(t *testing.T) {
	mlxtest.NoLeaks(t)
	s := llmtest.Tiny
	const experts, topK, scale = 8, 2, 1.8
	dir := t.TempDir()
	if err := llmtest.GLM4MoeLite(s, 32, experts, topK).Write(dir, 5, llmtest.Quant{}); err != nil {
		t.Fatal(err)
	}
	m, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Info().Family != "glm4_moe_lite" {
		t.Fatalf("family %q", m.Info().Family)
	}
	moe, ok := m.(*deepseek).dsLayers[1].mlp.(*sparseMoE)
	if !ok || !moe.sigmoid || moe.scoreBias == nil {
		t.Fatalf("layer 1 is not a sigmoid-routed MoE block: %T", m.(*deepseek).dsLayers[1].mlp)
	}
	read := checkpoint64(t, dir)
	const p = "model.layers.1.mlp."
	router, bias := read(p+"gate.weight"), read(p+"gate.e_score_correction_bias")
	inter := s.Intermediate / 3
	// y = down(silu(gate x) * up x), each [out, in] row-major
	mlp := func(pre string, x []float64) []float64 {
		g, u, d := read(pre+"gate_proj.weight"), read(pre+"up_proj.weight"), read(pre+"down_proj.weight")
		act := make([]float64, inter)
		for i := range act {
			var a, b float64
			for j, xj := range x {
				a += g[i*s.Hidden+j] * xj
				b += u[i*s.Hidden+j] * xj
			}
			act[i] = a / (1 + math.Exp(-a)) * b
		}
		y := make([]float64, s.Hidden)
		for i := range y {
			for j, aj := range act {
				y[i] += d[i*inter+j] * aj
			}
		}
		return y
	}
	const tokens = 12
	xs := normalInputs(9, 9, tokens*s.Hidden)
	x := mlx.FromSlice(xs, 1, tokens, s.Hidden)
	y := moe.forward(x)
	got := y.Float32s()
	mlx.Free(x, y)

	biasMatters := false
	worst := 0.0
	for tok := 0; tok < tokens; tok++ {
		xt := make([]float64, s.Hidden)
		for j := range xt {
			xt[j] = float64(xs[tok*s.Hidden+j])
		}
		scores := sigmoidScores(router, xt)
		chosen := topExperts(scores, bias, topK)
		if fmt.Sprint(chosen) != fmt.Sprint(topExperts(scores, nil, topK)) {
			biasMatters = true
		}
		var sum float64
		for _, e := range chosen {
			sum += scores[e]
		}
		want := mlp(p+"shared_experts.", xt)
		for _, e := range chosen {
			ye := mlp(fmt.Sprintf("%sexperts.%d.", p, e), xt)
			w := scores[e] / (sum + 1e-20) * scale
			for i := range want {
				want[i] += w * ye[i]
			}
		}
		for i, v := range want {
			worst = math.Max(worst, math.Abs(float64(got[tok*s.Hidden+i])-v))
		}
	}
	if worst > 1e-4 {
		t.Errorf("MoE block differs from the float64 reference by %g", worst)
	}
	if !biasMatters {
		t.Fatal("e_score_correction_bias changes no token's experts: the test cannot tell it is read")
	}
}
