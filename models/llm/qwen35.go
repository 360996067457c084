package llm

import (
	"fmt"
	"math"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// Qwen3.5: a hybrid of linear and full attention. Most layers
// (layer_types "linear_attention", three in four in the release) are Gated
// DeltaNet layers, whose state per head is a fixed [Dk, Dv] matrix instead
// of a growing KV cache:
//
//	qkv = silu(causal depthwise conv1d(in_proj_qkv(x)))   // kernel 4, state: last 3 inputs
//	q, k = l2norm per head (q also / sqrt(Dk)); key heads repeated to the value heads
//	g = -exp(A_log) * softplus(in_proj_a(x) + dt_bias); β = sigmoid(in_proj_b(x))
//	o = gated delta rule(q, k, v, g, β)                  // see nn.GatedDeltaChunked
//	y = out_proj(rmsnorm(o) * norm.weight * silu(in_proj_z(x)))
//
// The others are full attention with a gated output: q_proj gives each head
// its query and a gate side by side; q and k get per-head RMSNorm; RoPE
// turns only the first partial_rotary_factor of each head (Qwen's MRoPE,
// which with text-only positions is plain RoPE); the heads are multiplied
// by sigmoid(gate) before o_proj.
//
// RMSNorms outside the delta layers store w for (1 + w) in Hugging Face's
// layout; mlx-lm's converted checkpoints (under language_model.model.) have
// the one added already, and their conv1d weight as [C, K, 1] (the sign
// this loader goes by, as mlx-lm does).
// Released checkpoints carry a vision tower (model.visual.*) and
// multi-token-prediction weights (mtp.*): the text graph skips both.
func init() {
	Register(Arch{
		Family: profile.Family{Name: "qwen3_5", Architectures: []string{"Qwen3_5ForConditionalGeneration", "Qwen3_5ForCausalLM"},
			ModelTypes: []string{"qwen3_5", "qwen3_5_text"},
			Check:      func(cfg *profile.Config) error { _, err := qwen35ConfigOf(cfg.Raw, false); return err }},
		New: func(cfg *profile.Config, w *nn.Weights) (Model, error) { return newQwen35(cfg.Raw, w, false) },
	})
}

type qwen35 struct {
	base
	embed  *nn.Embedding
	layers []*qwen35Layer
	norm   *nn.RMSNorm
	head   nn.Layer // nil when tied
}

type qwen35Layer struct {
	attnNorm, mlpNorm *nn.RMSNorm
	delta             *deltaNet       // linear attention layers
	attn              *gatedAttention // full attention layers
	mlp               block
}

// deltaNet is one Gated DeltaNet layer.
type deltaNet struct {
	qkv, z, b, a, out nn.Layer
	conv              *mlx.Array // [kernel, channels]
	negA, dtBias      *mlx.Array // -exp(A_log), dt_bias: [value heads]
	norm              *nn.RMSNorm
	kHeads, vHeads    int
	kDim, vDim        int
}

// gatedAttention is full attention with an output gate.
type gatedAttention struct {
	q, k, v, o   nn.Layer
	qNorm, kNorm *nn.RMSNorm
	rope         *nn.RoPE
	heads, kv, d int
	gated        bool
	scale        float32
}

// qwen35Layouts are where checkpoints put the text model, and whether
// their (1 + w) norms still need the one: Hugging Face's release and
// text-only layouts do, mlx-lm's converted one does not.
var qwen35Layouts = []struct {
	prefix, head string
	plusOne      bool
}{
	{"model.language_model.", "lm_head", true},
	{"model.", "lm_head", true},
	{"language_model.model.", "language_model.lm_head", false},
}

func newQwen35(raw map[string]any, w *nn.Weights, moe bool) (Model, error) {
	c, err := qwen35ConfigOf(raw, moe)
	if err != nil {
		return nil, err
	}
	layout := -1
	for i, l := range qwen35Layouts {
		if w.Has(l.prefix+"embed_tokens.weight") || w.Has(l.prefix+"embed_tokens.scales") {
			layout = i
			break
		}
	}
	if layout < 0 {
		return nil, fmt.Errorf("no embed_tokens tensor under model.language_model., model. or language_model.model.")
	}
	lay := qwen35Layouts[layout]
	pre, plusOne := lay.prefix, lay.plusOne
	// mlx-lm (and converters that follow it) moves the conv1d kernel to
	// [C, K, 1] and adds the one to the norms in the same step, so the
	// kernel's layout says which norms a checkpoint holds, whatever its
	// prefix.
	for i, lin := range c.linear {
		if sh := w.Shape(fmt.Sprintf("%slayers.%d.linear_attn.conv1d.weight", pre, i)); lin && len(sh) == 3 && c.ConvKernel > 1 {
			plusOne = sh[1] == 1
			break
		}
	}
	rope, err := nn.NewRoPE(c.rotaryDims, c.RopeTheta, false, c.ropeScaling, c.MaxPos)
	if err != nil {
		return nil, err
	}
	family := "qwen3_5"
	if moe {
		family = "qwen3_5_moe"
	}
	m := &qwen35{}
	m.ropes = []*nn.RoPE{rope}
	m.embed = w.Embedding(pre+"embed_tokens", c.Vocab, c.Hidden)
	full := 0
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("%slayers.%d.", pre, i)
		l := &qwen35Layer{
			attnNorm: w.RMSNorm(p+"input_layernorm", c.Hidden, c.Eps, plusOne),
			mlpNorm:  w.RMSNorm(p+"post_attention_layernorm", c.Hidden, c.Eps, plusOne),
		}
		if c.linear[i] {
			l.delta = newDeltaNet(w, p+"linear_attn.", c)
		} else {
			l.attn = newGatedAttention(w, p+"self_attn.", c, rope, plusOne)
			full++
		}
		if c.sparse(i) {
			l.mlp = newQwen35MoE(w, p+"mlp.", c)
		} else {
			mlp := loadGatedMLP(w, p+"mlp.", c.Hidden, c.Intermediate, false, mlx.SwiGLU)
			l.mlp = &mlp
		}
		m.layers = append(m.layers, l)
	}
	m.norm = w.RMSNorm(pre+"norm", c.Hidden, c.Eps, plusOne)
	tied := !w.Has(lay.head + ".weight")
	if t := c.tied(); t != nil && *t {
		tied = true
		w.Ignore(lay.head + ".")
	}
	if !tied {
		m.head = w.Linear(lay.head, c.Hidden, c.Vocab, false)
	}
	// The vision tower and the multi-token-prediction head are not part
	// of the text graph.
	w.Ignore("model.visual.", "vision_tower.", "mtp.", "rotary_emb.inv_freq")
	m.weights = w.Loaded()
	m.info = Info{Family: family, VocabSize: c.Vocab, Layers: c.Layers, HiddenSize: c.Hidden, MaxContext: c.MaxPos, EOS: c.eos(),
		WeightBytes: w.Bytes(), PackedBytes: w.PackedBytes(),
		CacheBytesPerToken: int64(full) * 2 * int64(c.KVHeads*c.HeadDim) * 4}
	return m, nil
}

func newDeltaNet(w *nn.Weights, p string, c *qwen35Config) *deltaNet {
	kd, vd := c.LinKHeads*c.LinKDim, c.LinVHeads*c.LinVDim
	channels := 2*kd + vd
	d := &deltaNet{
		qkv:    w.Linear(p+"in_proj_qkv", c.Hidden, channels, false),
		z:      w.Linear(p+"in_proj_z", c.Hidden, vd, false),
		b:      w.Linear(p+"in_proj_b", c.Hidden, c.LinVHeads, false),
		a:      w.Linear(p+"in_proj_a", c.Hidden, c.LinVHeads, false),
		out:    w.Linear(p+"out_proj", vd, c.Hidden, false),
		norm:   w.RMSNorm(p+"norm", c.LinVDim, c.Eps, false),
		dtBias: w.Array(p+"dt_bias", c.LinVHeads),
		kHeads: c.LinKHeads, vHeads: c.LinVHeads, kDim: c.LinKDim, vDim: c.LinVDim,
	}
	if aLog := w.Array(p+"A_log", c.LinVHeads); aLog != nil {
		d.negA = w.Replace(aLog, scoped1(func() *mlx.Array { return mlx.Neg(mlx.Exp(mlx.AsType(aLog, mlx.Float32))) }))
	}
	// Hugging Face stores the depthwise kernel as [C, 1, K], mlx-lm as
	// [C, K, 1]: both are [C, K] once the unit axis goes.
	if cw := w.Array(p+"conv1d.weight", channels, -1, -1); cw != nil {
		sh := cw.Shape()
		if k := c.ConvKernel; !(sh[1] == 1 && sh[2] == k) && !(sh[1] == k && sh[2] == 1) {
			w.Failf("tensor %sconv1d.weight has shape %v, want [%d, 1, %d] or [%d, %d, 1]", p, sh, channels, k, channels, k)
		} else {
			kc := scoped1(func() *mlx.Array { return mlx.Copy(mlx.Transpose(mlx.Reshape(cw, channels, c.ConvKernel), 1, 0)) })
			d.conv = w.Replace(cw, kc)
		}
	}
	if w.Has(p + "conv1d.bias") {
		w.Failf("tensor %sconv1d.bias: the convolution has no bias in this architecture", p)
	}
	return d
}

func newGatedAttention(w *nn.Weights, p string, c *qwen35Config, rope *nn.RoPE, plusOne bool) *gatedAttention {
	gated := c.OutputGate == nil || *c.OutputGate
	qOut := c.Heads * c.HeadDim
	if gated {
		qOut *= 2
	}
	return &gatedAttention{
		q:     w.Linear(p+"q_proj", c.Hidden, qOut, c.AttnBias),
		k:     w.Linear(p+"k_proj", c.Hidden, c.KVHeads*c.HeadDim, c.AttnBias),
		v:     w.Linear(p+"v_proj", c.Hidden, c.KVHeads*c.HeadDim, c.AttnBias),
		o:     w.Linear(p+"o_proj", c.Heads*c.HeadDim, c.Hidden, c.AttnBias),
		qNorm: w.RMSNorm(p+"q_norm", c.HeadDim, c.Eps, plusOne),
		kNorm: w.RMSNorm(p+"k_norm", c.HeadDim, c.Eps, plusOne),
		rope:  rope, heads: c.Heads, kv: c.KVHeads, d: c.HeadDim, gated: gated,
		scale: float32(1 / math.Sqrt(float64(c.HeadDim))),
	}
}

func (a *gatedAttention) forward(x *mlx.Array, c nn.Cache) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	b, l := x.Dim(0), x.Dim(1)
	qg := a.q.Forward(x)
	var q, gate *mlx.Array
	if a.gated {
		// each head's query, then its gate: [B, L, H, 2D]
		hs := mlx.Reshape(qg, b, l, a.heads, 2*a.d)
		q = mlx.Transpose(mlx.SliceAxis(hs, 3, 0, a.d), 0, 2, 1, 3)
		gate = mlx.Reshape(mlx.SliceAxis(hs, 3, a.d, 2*a.d), b, l, a.heads*a.d)
	} else {
		q = splitHeads(qg, a.heads, a.d)
	}
	k := splitHeads(a.k.Forward(x), a.kv, a.d)
	v := splitHeads(a.v.Forward(x), a.kv, a.d)
	off := c.Offset()
	q, k = a.rope.Forward(a.qNorm.Forward(q), off), a.rope.Forward(a.kNorm.Forward(k), off)
	k, v = c.Update(k, v)
	o := mergeHeads(nn.Attention(q, k, v, a.scale, mlx.CausalMask(), 0))
	if gate != nil {
		o = mlx.Mul(o, mlx.Sigmoid(gate))
	}
	return s.Keep(a.o.Forward(o))
}

func (d *deltaNet) forward(x *mlx.Array, c nn.Cache) *mlx.Array {
	rc, ok := c.(*nn.RecurrentCache)
	if !ok {
		panic(fmt.Sprintf("qwen3_5: a linear-attention layer needs a recurrent cache, got %T", c))
	}
	s := mlx.NewScope()
	defer s.Close()
	b, l := x.Dim(0), x.Dim(1)
	kd, vd := d.kHeads*d.kDim, d.vHeads*d.vDim
	channels, kernel := 2*kd+vd, d.conv.Dim(0)
	// Causal depthwise convolution over the last kernel-1 inputs and the
	// new ones, as kernel shifted multiply-adds.
	prev := rc.Conv()
	if prev == nil {
		prev = mlx.Zeros([]int{b, kernel - 1, channels}, mlx.Float32)
	}
	xs := mlx.Concatenate([]*mlx.Array{prev, d.qkv.Forward(x)}, 1) // [B, kernel-1+L, C]
	var y *mlx.Array
	for j := 0; j < kernel; j++ {
		t := mlx.Mul(mlx.SliceAxis(xs, 1, j, j+l), mlx.SliceAxis(d.conv, 0, j, j+1))
		if y == nil {
			y = t
		} else {
			y = mlx.Add(y, t)
		}
	}
	y = mlx.Silu(y)
	// a copy, so the state does not keep the whole chunk's inputs alive
	conv := mlx.Copy(mlx.SliceAxis(xs, 1, l, l+kernel-1))
	rep := d.vHeads / d.kHeads
	heads := func(from, to, h, dim int) *mlx.Array {
		return mlx.Reshape(mlx.SliceAxis(y, 2, from, to), b, l, h, dim)
	}
	q := nn.L2Normalize(heads(0, kd, d.kHeads, d.kDim), 1e-6)
	q = mlx.MulScalar(q, 1/math.Sqrt(float64(d.kDim)))
	k := nn.L2Normalize(heads(kd, 2*kd, d.kHeads, d.kDim), 1e-6)
	v := heads(2*kd, channels, d.vHeads, d.vDim)
	if rep > 1 { // value head h reads key head h / rep
		q, k = mlx.Repeat(q, rep, 2), mlx.Repeat(k, rep, 2)
	}
	toHeads := func(a *mlx.Array) *mlx.Array { return mlx.Transpose(a, 0, 2, 1, 3) } // [B, H, L, D]
	perHead := func(a *mlx.Array) *mlx.Array { return mlx.Transpose(a, 0, 2, 1) }    // [B, L, H] -> [B, H, L]
	g := perHead(mlx.Mul(d.negA, nn.Softplus(mlx.Add(d.a.Forward(x), d.dtBias))))
	beta := perHead(mlx.Sigmoid(d.b.Forward(x)))
	state := rc.State()
	if state == nil {
		state = mlx.Zeros([]int{b, d.vHeads, d.kDim, d.vDim}, mlx.Float32)
	}
	var o *mlx.Array
	if l == 1 {
		o, state = nn.GatedDeltaStep(toHeads(q), toHeads(k), toHeads(v), g, beta, state)
	} else {
		o, state = nn.GatedDeltaChunked(toHeads(q), toHeads(k), toHeads(v), g, beta, state, 0)
	}
	o = mlx.Transpose(o, 0, 2, 1, 3) // [B, L, Hv, Dv]
	z := mlx.Reshape(d.z.Forward(x), b, l, d.vHeads, d.vDim)
	o = mlx.Mul(d.norm.Forward(o), mlx.Silu(z))
	out := d.out.Forward(mlx.Reshape(o, b, l, vd))
	rc.Advance(conv, state, l)
	return s.Keep(out)
}

func (l *qwen35Layer) forward(x *mlx.Array, c nn.Cache) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	var r *mlx.Array
	if l.delta != nil {
		r = l.delta.forward(l.attnNorm.Forward(x), c)
	} else {
		r = l.attn.forward(l.attnNorm.Forward(x), c)
	}
	h := mlx.Add(x, r)
	return s.Keep(mlx.Add(h, l.mlp.forward(l.mlpNorm.Forward(h))))
}

// NewCaches gives linear-attention layers a recurrent state and full
// attention layers a KV cache.
func (m *qwen35) NewCaches() []nn.Cache {
	cs := make([]nn.Cache, len(m.layers))
	for i, l := range m.layers {
		if l.delta != nil {
			cs[i] = nn.NewRecurrentCache()
		} else {
			cs[i] = nn.NewKVCache()
		}
	}
	return cs
}

func (m *qwen35) Forward(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return forward(m, tokens, caches)
}

func (m *qwen35) Hidden(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return decode(m, func() *mlx.Array { return m.embed.Forward(tokens) }, m.layers, caches, m.norm)
}

func (m *qwen35) Logits(h *mlx.Array) *mlx.Array {
	if m.head != nil {
		return m.head.Forward(h)
	}
	return m.embed.AsLinear(h)
}

// scoped1 runs fn in a scope of its own and returns its one result: the
// load-time derivations above, freeing their intermediates.
func scoped1(fn func() *mlx.Array) *mlx.Array {
	return mlx.Scoped(func() []*mlx.Array { return []*mlx.Array{fn()} })[0]
}
