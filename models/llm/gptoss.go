package llm

import (
	"fmt"
	"math"
	"slices"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// GPT-OSS: a mixture-of-experts transformer with
//   - attention sinks: a learned logit per head that joins every softmax
//     and takes its share of the probability without contributing a value;
//   - sliding-window and full attention layers as layer_types lists them;
//   - biases on q, k, v and o, and on the router;
//   - a router that takes the top-k logits and softmaxes just those;
//   - experts [E, in, out] whose gate and up outputs interleave, with the
//     clamped SwiGLU (up+1) * gate*sigmoid(1.702*gate), both clamped at
//     swiglu_limit (gate from above only);
//   - YaRN RoPE (NeoX pairs), truncate honoured.
//
// Experts come as float tensors, as released (MXFP4 *_blocks and
// *_scales, kept packed and multiplied so), or in mlx-lm's layout (gate,
// up and down stacked apart, float or quantized).
func init() {
	Register(Arch{
		Family: profile.Family{Name: "gpt_oss", Architectures: []string{"GptOssForCausalLM"}, ModelTypes: []string{"gpt_oss"},
			Check: func(cfg *profile.Config) error { _, err := gptOSSConfigOf(cfg.Raw); return err },
			Inactive: func(cfg *profile.Config) int64 {
				c, err := gptOSSConfigOf(cfg.Raw)
				if err != nil {
					return 0
				}
				// three [inter, hidden] matrices and their biases per expert
				per := 3*int64(c.Hidden)*int64(c.Intermediate) + 2*int64(c.Intermediate) + int64(c.Hidden)
				return int64(c.Layers) * int64(c.Experts-c.TopK) * per
			},
			QuantMethods: []string{"mxfp4"}},
		New: func(cfg *profile.Config, w *nn.Weights) (Model, error) { return newGptOSS(cfg.Raw, w) },
	})
}

type gptOSSConfig struct {
	llamaConfig
	Experts    int      `json:"num_local_experts"`
	TopK       int      `json:"num_experts_per_tok"`
	LayerTypes []string `json:"layer_types"`
	Window     int      `json:"sliding_window"`
	Limit      float64  `json:"swiglu_limit"`
}

func gptOSSConfigOf(raw map[string]any) (*gptOSSConfig, error) {
	if err := checkKeys(raw, append(llamaKeys, "num_local_experts", "num_experts_per_tok", "experts_per_token", "layer_types",
		"sliding_window", "swiglu_limit", "initial_context_length")...); err != nil {
		return nil, err
	}
	var c gptOSSConfig
	if err := decodeConfig(raw, &c); err != nil {
		return nil, err
	}
	if err := c.defaults(); err != nil {
		return nil, err
	}
	if c.Experts <= 0 || c.TopK <= 0 || c.TopK > c.Experts {
		return nil, fmt.Errorf("num_experts_per_tok %d must be between 1 and num_local_experts %d", c.TopK, c.Experts)
	}
	if err := checkLayerTypes("layer_types", c.LayerTypes, c.Layers, "full_attention", "sliding_attention"); err != nil {
		return nil, err
	}
	if i := slices.Index(c.LayerTypes, "sliding_attention"); i >= 0 && c.Window <= 0 {
		return nil, fmt.Errorf("layer_types[%d] is sliding_attention but sliding_window is %d", i, c.Window)
	}
	if c.Limit <= 0 {
		c.Limit = 7
	}
	return &c, nil
}

type gptOSS struct {
	llama  // embedding, norm, head and Info
	layers []*gptOSSLayer
}

type gptOSSLayer struct {
	attnNorm, mlpNorm *nn.RMSNorm
	attn              attention
	sinks             *mlx.Array // [H]
	moe               *gptOSSMoE
}

type gptOSSMoE struct {
	router nn.Layer
	// The experts in one of three layouts: Hugging Face's float gateUp
	// [E, H, 2I] (gate and up interleaved); the released MXFP4 gateUpQ
	// ([E, 2I, H], interleaved alike); or mlx-lm's gate and up
	// ([E, I, H] each: dense, affine or mxfp4). down is [E, I, H] float
	// (Hugging Face) or downQ [E, H, I].
	gateUp, down        *mlx.Array
	gateUpQ, gate, up   *nn.ExpertMatrix
	downQ               *nn.ExpertMatrix
	gateUpB, gateB, upB *mlx.Array // [E, 2I] interleaved, or [E, I] each
	downB               *mlx.Array // [E, H]
	topK, inter         int
	limit               float64
}

// newGptOSSMoE loads the experts of layer prefix p in whichever layout the
// checkpoint has (see gptOSSMoE).
func newGptOSSMoE(w *nn.Weights, p string, c *gptOSSConfig) *gptOSSMoE {
	e := p + "mlp.experts."
	m := &gptOSSMoE{
		router: w.Linear(p+"mlp.router", c.Hidden, c.Experts, true),
		topK:   c.TopK, inter: c.Intermediate, limit: c.Limit,
	}
	E, H, I := c.Experts, c.Hidden, c.Intermediate
	switch {
	case w.Has(e + "gate_proj.weight"): // mlx-lm (sanitized)
		m.gate = w.StackedExperts(e+"gate_proj", E, H, I)
		m.up = w.StackedExperts(e+"up_proj", E, H, I)
		m.downQ = w.StackedExperts(e+"down_proj", E, I, H)
		m.gateB = w.Array(e+"gate_proj.bias", E, I)
		m.upB = w.Array(e+"up_proj.bias", E, I)
		m.downB = w.Array(e+"down_proj.bias", E, H)
		return m
	case w.Has(e+"gate_up_proj") || w.Has(e+"gate_up_proj_blocks"): // Hugging Face's float or released MXFP4
		m.gateUp, m.gateUpQ = hfExperts(w, e+"gate_up_proj", E, H, 2*I)
		m.down, m.downQ = hfExperts(w, e+"down_proj", E, I, H)
	default:
		w.Failf("missing tensor %sgate_up_proj (float), %sgate_up_proj_blocks (MXFP4) or %sgate_proj.weight (mlx-lm)", e, e, e)
		return m
	}
	m.gateUpB = w.Array(e+"gate_up_proj_bias", E, 2*I)
	m.downB = w.Array(e+"down_proj_bias", E, H)
	return m
}

func newGptOSS(raw map[string]any, w *nn.Weights) (Model, error) {
	c, err := gptOSSConfigOf(raw)
	if err != nil {
		return nil, err
	}
	rope, err := nn.NewRoPE(c.HeadDim, c.RopeTheta, false, c.RopeScaling, c.MaxPos)
	if err != nil {
		return nil, err
	}
	m := &gptOSS{}
	m.ropes = []*nn.RoPE{rope}
	m.embed = w.Embedding("model.embed_tokens", c.Vocab, c.Hidden)
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		l := &gptOSSLayer{
			attnNorm: w.RMSNorm(p+"input_layernorm", c.Hidden, c.Eps, false),
			mlpNorm:  w.RMSNorm(p+"post_attention_layernorm", c.Hidden, c.Eps, false),
			attn: attention{
				qkv:   newQKV(w, p, c.Hidden, c.Heads, c.KVHeads, c.HeadDim, true),
				o:     w.Linear(p+"self_attn.o_proj", c.Heads*c.HeadDim, c.Hidden, true),
				rope:  rope,
				heads: c.Heads, kv: c.KVHeads, d: c.HeadDim,
				scale: float32(1 / math.Sqrt(float64(c.HeadDim))),
			},
			sinks: w.Array(p+"self_attn.sinks", c.Heads),
		}
		if c.LayerTypes[i] == "sliding_attention" {
			l.attn.window = c.Window
		}
		l.moe = newGptOSSMoE(w, p, c)
		m.layers = append(m.layers, l)
	}
	m.finish(w, &c.llamaConfig, "gpt_oss")
	return m, nil
}

// NewCaches gives sliding layers a rotating cache that keeps only what
// their window can still see; the mask below is aligned to the end of
// whatever keys a cache returns, so both kinds mask alike.
func (m *gptOSS) NewCaches() []nn.Cache {
	cs := make([]nn.Cache, len(m.layers))
	for i, l := range m.layers {
		if l.attn.window > 0 {
			cs[i] = nn.NewRotatingCache(l.attn.window)
		} else {
			cs[i] = nn.NewKVCache()
		}
	}
	return cs
}

func (m *gptOSS) Forward(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return forward(m, tokens, caches)
}

func (m *gptOSS) Hidden(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return decode(m, func() *mlx.Array { return m.embed.Forward(tokens) }, m.layers, caches, m.norm)
}

func (l *gptOSSLayer) forward(x *mlx.Array, c nn.Cache) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	h := mlx.Add(x, l.attend(l.attnNorm.Forward(x), c))
	return s.Keep(mlx.Add(h, l.moe.forward(l.mlpNorm.Forward(h))))
}

// attend is attention with sinks: softmax over [scores | sink] per head,
// the sink's column then dropped.
func (l *gptOSSLayer) attend(x *mlx.Array, c nn.Cache) *mlx.Array {
	a := &l.attn
	p := a.qkv.Forward(x)
	b, lq := x.Dim(0), x.Dim(1)
	q, k, v := splitHeads(p[0], a.heads, a.d), splitHeads(p[1], a.kv, a.d), splitHeads(p[2], a.kv, a.d)
	off := c.Offset()
	q, k = a.rope.Forward(q, off), a.rope.Forward(k, off)
	k, v = c.Update(k, v)
	if rep := a.heads / a.kv; rep > 1 {
		k, v = mlx.Repeat(k, rep, 1), mlx.Repeat(v, rep, 1)
	}
	lk := k.Dim(2)
	scores := mlx.MulScalar(mlx.MatmulT(q, k), float64(a.scale)) // [B, H, Lq, Lk]
	mask := mlx.CreateCausalMask(lq, lk, a.window)
	scores = mlx.Where(mask, scores, mlx.Scalar(math.Inf(-1), mlx.Float32))
	sink := mlx.BroadcastTo(mlx.Reshape(l.sinks, 1, a.heads, 1, 1), b, a.heads, lq, 1)
	probs := mlx.Softmax(mlx.Concatenate([]*mlx.Array{scores, sink}, 3), -1)
	o := mlx.Matmul(mlx.SliceAxis(probs, 3, 0, lk), v)
	return a.o.Forward(mergeHeads(o))
}

func (m *gptOSSMoE) forward(x *mlx.Array) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	b, l, h := x.Dim(0), x.Dim(1), x.Dim(2)
	t, k := b*l, m.topK
	xs := mlx.Reshape(x, t, 1, h)
	logits := m.router.Forward(xs) // [T, 1, E]
	top := mlx.ArgTopK(logits, k, -1)
	weights := mlx.Softmax(mlx.TakeAlongAxis(logits, top, -1), -1) // over the chosen k only
	expert, token, order := expertRows(top, t, k)
	var gate, up *mlx.Array // [T*k, 1, I]
	if m.gate != nil {
		gate = mlx.Add(m.gate.Apply(xs, token, expert, true), mlx.Reshape(mlx.Take(m.gateB, expert, 0), t*k, 1, m.inter))
		up = mlx.Add(m.up.Apply(xs, token, expert, true), mlx.Reshape(mlx.Take(m.upB, expert, 0), t*k, 1, m.inter))
	} else {
		var gu *mlx.Array
		if m.gateUpQ != nil {
			gu = m.gateUpQ.Apply(xs, token, expert, true)
		} else {
			gu = mlx.GatherMM(xs, m.gateUp, token, expert, true)
		}
		gu = mlx.Add(gu, mlx.Reshape(mlx.Take(m.gateUpB, expert, 0), t*k, 1, 2*m.inter))
		gate, up = deinterleave(gu)
	}
	act := clampedSwiGLU(gate, up, m.limit)
	var y *mlx.Array
	if m.downQ != nil {
		y = m.downQ.Apply(act, nil, expert, true)
	} else {
		y = mlx.GatherMM(act, m.down, nil, expert, true)
	}
	y = mlx.Add(y, mlx.Reshape(mlx.Take(m.downB, expert, 0), t*k, 1, h))
	return s.Keep(mlx.Reshape(combineRows(y, order, weights, t, k, h), b, l, h))
}

// hfExperts loads Hugging Face's experts' matrix name, [E, in, out] float,
// or its released MXFP4 pair name_blocks/name_scales ([E, out, in/32, 16]
// and [E, out, in/32]), packed as it is. Neither is an error naming both.
func hfExperts(w *nn.Weights, name string, experts, in, out int) (*mlx.Array, *nn.ExpertMatrix) {
	switch {
	case w.Has(name):
		return w.ExpertArray(name, experts, in, out), nil
	case w.Has(name + "_blocks"):
		return nil, w.MXFP4Experts(name, experts, in, out)
	}
	w.Failf("missing tensor %s (float) or %s_blocks and %s_scales (MXFP4)", name, name, name)
	return nil, nil
}

// deinterleave splits a row [..., 2I] of interleaved gate/up outputs (gate
// at even, up at odd positions) into gate and up [..., I].
func deinterleave(gu *mlx.Array) (gate, up *mlx.Array) {
	nd := gu.Ndim()
	start, stop, step := make([]int, nd), gu.Shape(), make([]int, nd)
	for i := range step {
		step[i] = 1
	}
	step[nd-1] = 2
	gate = mlx.Slice(gu, start, stop, step)
	start[nd-1] = 1
	return gate, mlx.Slice(gu, start, stop, step)
}

// clampedSwiGLU is GPT-OSS's activation: with the gate clamped to at most
// limit and up to [-limit, limit], (up + 1) * gate*sigmoid(1.702*gate).
func clampedSwiGLU(gate, up *mlx.Array, limit float64) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	gate = mlx.Clip(gate, math.Inf(-1), limit)
	up = mlx.Clip(up, -limit, limit)
	return s.Keep(mlx.Mul(mlx.AddScalar(up, 1), mlx.Mul(gate, mlx.Sigmoid(mlx.MulScalar(gate, 1.702)))))
}
