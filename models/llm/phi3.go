package llm

import (
	"fmt"
	"math"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// Phi-3 / Phi-3.5 / Phi-4-mini: the Llama graph with fused projections.
// qkv_proj computes queries, keys and values in one matmul (rows in that
// order) and gate_up_proj the MLP's gate and up halves; only the first
// partial_rotary_factor of each head is rotated. The long-context
// variants' "longrope" scaling is run as mlx-lm runs it (see nn.RoPE). Like
// mlx-lm, the sliding_window some configs carry is ignored.
//
//	h = embed(tokens)
//	for each layer:
//	    q, k, v = split(qkv_proj(norm(h)))
//	    h += o_proj(attention(rope(q), rope(k), v))
//	    gate, up = split(gate_up_proj(norm(h)))
//	    h += down_proj(silu(gate) * up)
//	logits = lm_head(norm(h))

func init() {
	Register(Arch{
		Family: profile.Family{Name: "phi3", Architectures: []string{"Phi3ForCausalLM"}, ModelTypes: []string{"phi3"}, Check: func(cfg *profile.Config) error {
			_, err := phi3Config(cfg.Raw)
			return err
		}},
		New: func(cfg *profile.Config, w *nn.Weights) (Model, error) { return newPhi3(cfg.Raw, w) },
	})
}

type phi3Cfg struct {
	llamaConfig
	PartialRotary float64 `json:"partial_rotary_factor"`
	OrigMaxPos    int     `json:"original_max_position_embeddings"`
}

func phi3Config(raw map[string]any) (*phi3Cfg, error) {
	var c phi3Cfg
	if err := decodeConfig(raw, &c); err != nil {
		return nil, err
	}
	if err := c.defaults(); err != nil {
		return nil, err
	}
	c.PartialRotary = positive(c.PartialRotary, 1)
	dims := int(float64(c.HeadDim) * c.PartialRotary)
	if dims <= 0 || dims%2 != 0 {
		return nil, fmt.Errorf("partial_rotary_factor %v gives %d rotary dims of head_dim %d", c.PartialRotary, dims, c.HeadDim)
	}
	// Phi-3 keeps original_max_position_embeddings beside rope_scaling.
	if s := c.RopeScaling; s != nil && s.OriginalMaxPos == 0 {
		s.OriginalMaxPos = c.OrigMaxPos
	}
	if k := c.RopeScaling.Kind(); (k == "longrope" || k == "su") && len(c.RopeScaling.LongFactor) != dims/2 {
		return nil, fmt.Errorf("rope_scaling long_factor has %d entries for %d rotary dims", len(c.RopeScaling.LongFactor), dims)
	}
	return &c, nil
}

type phi3 struct {
	base
	embed  *nn.Embedding
	layers []*phi3Layer
	norm   *nn.RMSNorm
	head   nn.Layer // nil when tied
}

type phi3Layer struct {
	attnNorm, mlpNorm *nn.RMSNorm
	qkv, gateUp, down nn.Layer
	attn              attention // its o and rope; q, k, v come from qkv
	inter             int
}

func newPhi3(raw map[string]any, w *nn.Weights) (*phi3, error) {
	c, err := phi3Config(raw)
	if err != nil {
		return nil, err
	}
	rope, err := nn.NewRoPE(int(float64(c.HeadDim)*c.PartialRotary), c.RopeTheta, c.RopeTrad, c.RopeScaling, c.MaxPos)
	if err != nil {
		return nil, err
	}
	m := &phi3{}
	m.ropes = []*nn.RoPE{rope}
	m.embed = w.Embedding("model.embed_tokens", c.Vocab, c.Hidden)
	qkvOut := (c.Heads + 2*c.KVHeads) * c.HeadDim
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		m.layers = append(m.layers, &phi3Layer{
			attnNorm: w.RMSNorm(p+"input_layernorm", c.Hidden, c.Eps, false),
			mlpNorm:  w.RMSNorm(p+"post_attention_layernorm", c.Hidden, c.Eps, false),
			qkv:      w.Linear(p+"self_attn.qkv_proj", c.Hidden, qkvOut, c.AttnBias),
			attn: attention{
				o:     w.Linear(p+"self_attn.o_proj", c.Heads*c.HeadDim, c.Hidden, c.AttnBias),
				rope:  rope,
				heads: c.Heads, kv: c.KVHeads, d: c.HeadDim,
				scale: float32(1 / math.Sqrt(float64(c.HeadDim))),
			},
			gateUp: w.Linear(p+"mlp.gate_up_proj", c.Hidden, 2*c.Intermediate, false),
			down:   w.Linear(p+"mlp.down_proj", c.Intermediate, c.Hidden, false),
			inter:  c.Intermediate,
		})
	}
	m.norm = w.RMSNorm("model.norm", c.Hidden, c.Eps, false)
	tied := !w.Has("lm_head.weight")
	if c.Tie != nil && *c.Tie {
		tied = true
		w.Ignore("lm_head.")
	}
	if !tied {
		m.head = w.Linear("lm_head", c.Hidden, c.Vocab, false)
	}
	w.Ignore("rotary_emb.inv_freq")
	m.weights = w.Loaded()
	m.info = Info{Family: "phi3", VocabSize: c.Vocab, Layers: c.Layers, HiddenSize: c.Hidden, MaxContext: c.MaxPos, EOS: c.EOS, WeightBytes: w.Bytes()}
	return m, nil
}

func (m *phi3) NewCaches() []nn.Cache {
	cs := make([]nn.Cache, len(m.layers))
	for i := range cs {
		cs[i] = nn.NewKVCache()
	}
	return cs
}

func (m *phi3) Forward(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return forward(m, tokens, caches)
}

func (m *phi3) Hidden(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	caches = checkCaches(m, caches)
	s := mlx.NewScope()
	defer s.Close()
	h := m.embed.Forward(tokens)
	for i, l := range m.layers {
		h = s.Keep(l.forward(h, caches[i]))
	}
	return s.Keep(m.norm.Forward(h))
}

func (l *phi3Layer) forward(x *mlx.Array, c nn.Cache) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	a := &l.attn
	qkv := mlx.Split(l.qkv.Forward(l.attnNorm.Forward(x)), []int{a.heads * a.d, (a.heads + a.kv) * a.d}, -1)
	h := mlx.Add(x, a.attend(qkv[0], qkv[1], qkv[2], c))
	gu := mlx.Split(l.gateUp.Forward(l.mlpNorm.Forward(h)), []int{l.inter}, -1)
	return s.Keep(mlx.Add(h, l.down.Forward(mlx.Mul(mlx.Silu(gu[0]), gu[1]))))
}

func (m *phi3) Logits(h *mlx.Array) *mlx.Array {
	if m.head != nil {
		return m.head.Forward(h)
	}
	return m.embed.AsLinear(h)
}
