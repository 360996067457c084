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
// Experts come as float tensors or as released, MXFP4 (*_blocks and
// *_scales), expanded at load (see mxfp4.go).
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
	router         nn.Layer
	gateUp, down   *mlx.Array // [E, H, 2I] (gate, up interleaved), [E, I, H]
	gateUpB, downB *mlx.Array // [E, 2I], [E, H]
	topK, inter    int
	limit          float64
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
		e := p + "mlp.experts."
		l.moe = &gptOSSMoE{
			router:  w.Linear(p+"mlp.router", c.Hidden, c.Experts, true),
			gateUp:  expertWeight(w, e+"gate_up_proj", c.Experts, c.Hidden, 2*c.Intermediate),
			gateUpB: w.Array(e+"gate_up_proj_bias", c.Experts, 2*c.Intermediate),
			down:    expertWeight(w, e+"down_proj", c.Experts, c.Intermediate, c.Hidden),
			downB:   w.Array(e+"down_proj_bias", c.Experts, c.Hidden),
			topK:    c.TopK, inter: c.Intermediate, limit: c.Limit,
		}
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
	gu := mlx.Add(mlx.GatherMM(xs, m.gateUp, token, expert, true), mlx.Reshape(mlx.Take(m.gateUpB, expert, 0), t*k, 1, 2*m.inter))
	act := clampedSwiGLU(gu, m.limit)
	y := mlx.Add(mlx.GatherMM(act, m.down, nil, expert, true), mlx.Reshape(mlx.Take(m.downB, expert, 0), t*k, 1, h))
	return s.Keep(mlx.Reshape(combineRows(y, order, weights, t, k, h), b, l, h))
}

// clampedSwiGLU is GPT-OSS's activation of an interleaved gate/up row
// [..., 2I] (gate at even, up at odd positions): with the gate clamped to
// at most limit and up to [-limit, limit], (up + 1) * gate*sigmoid(1.702*gate).
func clampedSwiGLU(gu *mlx.Array, limit float64) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	nd := gu.Ndim()
	start, stop, step := make([]int, nd), gu.Shape(), make([]int, nd)
	for i := range step {
		step[i] = 1
	}
	step[nd-1] = 2
	gate := mlx.Slice(gu, start, stop, step)
	start[nd-1] = 1
	up := mlx.Slice(gu, start, stop, step)
	gate = mlx.Clip(gate, math.Inf(-1), limit)
	up = mlx.Clip(up, -limit, limit)
	return s.Keep(mlx.Mul(mlx.AddScalar(up, 1), mlx.Mul(gate, mlx.Sigmoid(mlx.MulScalar(gate, 1.702)))))
}
