package llm

import (
	"hark/mlx"
	"hark/models/nn"
)

// sparseMoE is a mixture-of-experts feed-forward block with SwiGLU
// experts (Mixtral's block_sparse_moe, Qwen3-MoE's mlp):
//
//	p = softmax(router(x))                  // over all experts, float32
//	top = the topK largest p; w = p[top]    // renormalised when normTopK
//	y = Σ_top w_e · down_e(silu(gate_e(x)) * up_e(x))
//
// Every (token, slot) pair is one row; the rows are sorted by expert so
// that each expert's weights are multiplied once for all of its rows (the
// gather-matmul's runs), and unsorted again before the weighted sum.
type sparseMoE struct {
	router         nn.Layer // [experts, hidden]
	gate, up, down *nn.ExpertMatrix
	experts, topK  int
	normTopK       bool
	// DeepSeek: routedScale multiplies the weights the router did not
	// renormalise (0: none), and a shared expert sees every token.
	routedScale float64
	shared      block
	// DeepSeek-V3's router (GLM-4.x MoE Lite): sigmoid scores; the
	// experts are chosen by score + scoreBias, weighted by the score
	// (renormalised when normTopK) and always scaled by routedScale.
	sigmoid   bool
	scoreBias *mlx.Array // [experts], nil: none
	// groups > 1 (GLM-4.x MoE's n_group) limits the choice to the
	// topGroups groups of experts/groups consecutive experts whose two
	// best biased scores sum highest.
	groups, topGroups int
}

// moeNames are how a family's checkpoints name the block: the router and
// each expert projection in per-expert (HF) form; mlx-lm's stacked form
// always says switch_mlp.{gate,up,down}_proj.
type moeNames struct {
	router, gate, up, down string
}

// newSparseMoE loads the block under p; the config has checked
// 1 <= topK <= experts.
func newSparseMoE(w *nn.Weights, p string, n moeNames, hidden, inter, experts, topK int, normTopK bool) *sparseMoE {
	return &sparseMoE{
		router:   w.Linear(p+n.router, hidden, experts, false),
		gate:     w.Experts(p, n.gate, "gate_proj", experts, hidden, inter),
		up:       w.Experts(p, n.up, "up_proj", experts, hidden, inter),
		down:     w.Experts(p, n.down, "down_proj", experts, inter, hidden),
		experts:  experts,
		topK:     topK,
		normTopK: normTopK,
	}
}

func (m *sparseMoE) forward(x *mlx.Array) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	b, l, h := x.Dim(0), x.Dim(1), x.Dim(2)
	t, k := b*l, m.topK
	xs := mlx.Reshape(x, t, 1, h)
	logits := mlx.AsType(m.router.Forward(xs), mlx.Float32)
	var top, weights *mlx.Array
	if m.sigmoid {
		top, weights = m.routeSigmoid(logits)
	} else {
		probs := mlx.Softmax(logits, -1) // [T, 1, E]
		top = mlx.ArgTopK(probs, k, -1)  // [T, 1, k]
		weights = mlx.TakeAlongAxis(probs, top, -1)
	}
	switch {
	case m.sigmoid: // renormalised and scaled already
	case m.normTopK:
		weights = mlx.Div(weights, mlx.Sum(weights, true, -1))
	case m.routedScale != 0:
		weights = mlx.MulScalar(weights, m.routedScale)
	}
	expert, token, order := expertRows(top, t, k)
	act := mlx.SwiGLU(m.gate.Apply(xs, token, expert, true), m.up.Apply(xs, token, expert, true))
	y := m.down.Apply(act, nil, expert, true) // [T*k, 1, H], sorted
	out := mlx.Reshape(combineRows(y, order, weights, t, k, h), b, l, h)
	if m.shared != nil {
		out = mlx.Add(out, m.shared.forward(x))
	}
	return s.Keep(out)
}

// routeSigmoid is DeepSeek-V3's routing of logits [T, 1, E], limited to
// groups of experts where groups is set (glm4_moe_lite's config refuses
// such limits). transformers adds 1e-20 to the sum it renormalises by.
func (m *sparseMoE) routeSigmoid(logits *mlx.Array) (top, weights *mlx.Array) {
	scores := mlx.Sigmoid(logits)
	choice := scores
	if m.scoreBias != nil {
		choice = mlx.Add(scores, m.scoreBias)
	}
	if m.groups > 1 && m.topGroups < m.groups {
		choice = m.limitGroups(choice)
	}
	top = mlx.ArgTopK(choice, m.topK, -1)
	weights = mlx.TakeAlongAxis(scores, top, -1)
	if m.normTopK {
		weights = mlx.Div(weights, mlx.AddScalar(mlx.Sum(weights, true, -1), 1e-20))
	}
	return top, mlx.MulScalar(weights, m.routedScale)
}

// limitGroups sets the biased scores choice [T, 1, E] of every expert
// outside each token's topGroups best groups to 0, as transformers masks
// them: a group's rank is the sum of its two best scores. (Groups tied at
// the last place are all kept, where transformers keeps one.)
func (m *sparseMoE) limitGroups(choice *mlx.Array) *mlx.Array {
	t := choice.Dim(0)
	g := mlx.Reshape(choice, t, m.groups, m.experts/m.groups)
	rank := mlx.Sum(mlx.TopK(g, 2, -1), false, -1)             // [T, G]
	last := mlx.Min(mlx.TopK(rank, m.topGroups, -1), true, -1) // [T, 1]
	keep := mlx.Reshape(mlx.GreaterEqual(rank, last), t, m.groups, 1)
	return mlx.Reshape(mlx.Where(keep, g, mlx.Scalar(0, mlx.Float32)), t, 1, m.experts)
}

// skippedExperts is the parameters of the experts a token is not routed
// to: in each of layers sparse layers, experts-topK SwiGLU experts of
// three [inter, hidden] matrices.
func skippedExperts(layers, experts, topK, hidden, inter int) int64 {
	return int64(layers) * int64(experts-topK) * 3 * int64(hidden) * int64(inter)
}

// sparseSkipped is skippedExperts over those of the first layers layers
// that sparse says route to experts, for families whose dense and sparse
// layers interleave (first_k_dense_replace, decoder_sparse_step, ...).
func sparseSkipped(layers int, sparse func(layer int) bool, experts, topK, hidden, inter int) int64 {
	n := 0
	for i := range layers {
		if sparse(i) {
			n++
		}
	}
	return skippedExperts(n, experts, topK, hidden, inter)
}

// expertRows sorts the T*k (token, slot) rows of the router's choice top
// ([T, 1, k]) by expert: each sorted row's expert and token, and the
// order that sorted them. The sort is stable, so each expert's rows stay
// in token order.
func expertRows(top *mlx.Array, t, k int) (expert, token, order *mlx.Array) {
	flat := mlx.Reshape(top, t*k)
	order = mlx.ArgSort(flat, 0)
	expert = mlx.Take(flat, order, 0)
	tokens := mlx.Reshape(mlx.BroadcastTo(mlx.Reshape(mlx.Arange(0, float64(t), 1, mlx.Int32), t, 1), t, k), t*k)
	return expert, mlx.Take(tokens, order, 0), order
}

// combineRows puts the experts' outputs y ([T*k, 1, H], in expertRows'
// order) back in (token, slot) order and sums each token's k rows
// weighted by weights ([T, 1, k]), giving [T, H].
func combineRows(y, order, weights *mlx.Array, t, k, h int) *mlx.Array {
	y = mlx.Take(y, mlx.ArgSort(order, 0), 0)
	return mlx.Sum(mlx.Mul(mlx.Reshape(y, t, k, h), mlx.Reshape(weights, t, k, 1)), false, 1)
}
