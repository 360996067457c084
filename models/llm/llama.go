package llm

import (
	"fmt"
	"math"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// Llama 2 / 3.x, and the models that differ from it only by switches:
// Mistral (same graph; its sliding_window is ignored, as mlx-lm does),
// Qwen2/2.5 (bias on q, k and v) and Qwen3 (RMSNorm on each query and key
// head before RoPE; see qwen3.go).
//
//	h = embed(tokens)
//	for each layer:
//	    h += o_proj(attention(rope(q_proj(norm(h))), rope(k_proj(..)), v_proj(..)))
//	    h += down_proj(silu(gate_proj(norm(h))) * up_proj(norm(h)))
//	logits = lm_head(norm(h))   // or embed as a linear map when tied

func init() {
	for _, v := range []struct {
		name, arch, mt string
		variant        llamaVariant
	}{
		{"llama", "LlamaForCausalLM", "llama", llamaVariant{}},
		{"mistral", "MistralForCausalLM", "mistral", llamaVariant{}},
		{"qwen2", "Qwen2ForCausalLM", "qwen2", llamaVariant{qkvBias: true}},
	} {
		variant := v.variant
		Register(Arch{
			Family: profile.Family{Name: v.name, Architectures: []string{v.arch}, ModelTypes: []string{v.mt}, Check: checkLlama},
			New: func(cfg *profile.Config, w *nn.Weights) (Model, error) {
				return newLlama(cfg.Raw, w, variant, v.name)
			},
		})
	}
}

type llamaVariant struct {
	qkvBias bool // Qwen2: q, k, v projections carry a bias
	qkNorm  bool // Qwen3: per-head RMSNorm of queries and keys
}

type llamaConfig struct {
	Hidden       int             `json:"hidden_size"`
	Layers       int             `json:"num_hidden_layers"`
	Intermediate int             `json:"intermediate_size"`
	Heads        int             `json:"num_attention_heads"`
	KVHeads      int             `json:"num_key_value_heads"`
	HeadDim      int             `json:"head_dim"`
	Vocab        int             `json:"vocab_size"`
	Eps          float64         `json:"rms_norm_eps"`
	RopeTheta    float64         `json:"rope_theta"`
	RopeTrad     bool            `json:"rope_traditional"`
	RopeScaling  *nn.RopeScaling `json:"rope_scaling"`
	RopeParams   *nn.RopeScaling `json:"rope_parameters"`
	MaxPos       int             `json:"max_position_embeddings"`
	Tie          *bool           `json:"tie_word_embeddings"`
	AttnBias     bool            `json:"attention_bias"`
	MLPBias      bool            `json:"mlp_bias"`
	HiddenAct    string          `json:"hidden_act"`
	EOS          IDList          `json:"eos_token_id"`
	// Switches of layouts this graph does not build (all layers full
	// attention): refused by value.
	LayerTypes []string `json:"layer_types"`
	UseSliding bool     `json:"use_sliding_window"`
}

func (c *llamaConfig) defaults() error {
	if c.Hidden <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.Vocab <= 0 || c.Intermediate <= 0 {
		return fmt.Errorf("config.json needs positive hidden_size, num_hidden_layers, num_attention_heads, intermediate_size and vocab_size")
	}
	c.KVHeads = positive(c.KVHeads, c.Heads)
	c.HeadDim = positive(c.HeadDim, c.Hidden/c.Heads)
	c.Eps = positive(c.Eps, 1e-6)
	if c.RopeParams != nil && c.RopeScaling == nil {
		c.RopeScaling = c.RopeParams.At("rope_parameters")
		c.RopeTheta = positive(c.RopeTheta, c.RopeParams.RopeTheta)
	}
	c.RopeTheta = positive(c.RopeTheta, 10000)
	if c.Heads%c.KVHeads != 0 {
		return fmt.Errorf("num_attention_heads %d is not a multiple of num_key_value_heads %d", c.Heads, c.KVHeads)
	}
	if c.HiddenAct != "" && c.HiddenAct != "silu" {
		return fmt.Errorf("hidden_act %q is not supported (only silu)", c.HiddenAct)
	}
	if c.UseSliding {
		return fmt.Errorf("config.json: use_sliding_window true is not supported (this graph attends over the whole context in every layer)")
	}
	if c.LayerTypes != nil {
		if err := checkLayerTypes("layer_types", c.LayerTypes, c.Layers, "full_attention"); err != nil {
			return err
		}
	}
	return nn.CheckRopeScaling(c.RopeScaling)
}

func checkLlama(cfg *profile.Config) error {
	var c llamaConfig
	if err := decodeConfig(cfg.Raw, &c); err != nil {
		return err
	}
	return c.defaults()
}

type llama struct {
	base
	embed  *nn.Embedding
	layers []*llamaLayer
	norm   *nn.RMSNorm
	head   nn.Layer // nil when tied to embed
}

type llamaLayer struct {
	attnNorm, mlpNorm *nn.RMSNorm
	attn              attention
	mlp               block // a gatedMLP, or a mixture of experts
}

// block is a layer's feed-forward part.
type block interface {
	forward(x *mlx.Array) *mlx.Array
}

// attention is the grouped-query attention block shared by the
// Llama-family graphs.
type attention struct {
	qkv          *nn.Projections // q, k and v, fused when they can be
	o            nn.Layer
	qNorm, kNorm *nn.RMSNorm // Qwen3 and Gemma 3 only
	rope         *nn.RoPE
	heads, kv, d int
	scale        float32
	window       int     // sliding window (0: full attention)
	softcap      float32 // attention logit soft-capping (0: none)
}

func (a *attention) forward(x *mlx.Array, c nn.Cache) *mlx.Array {
	if a.qNorm == nil {
		if qkv, ok := a.qkv.Joined(x); ok {
			if x.Dim(1) == 1 && a.window == 0 && a.softcap == 0 {
				// A decode step: one op from the projection to the merged
				// heads, where the cache has it.
				if o := c.AttendDecode(qkv, mlx.DecodeAttentionParams{Heads: a.heads, KVHeads: a.kv, HeadDim: a.d, RoPE: a.rope.Params(), Scale: a.scale}); o != nil {
					qkv.Free()
					return a.o.Forward(o)
				}
			}
			// Queries and keys sit side by side in the fused output and
			// RoPE treats every head alike, so one view as heads and one
			// rotation replace three splits and two rotations: at decode
			// such small ops cost about as much as their arithmetic.
			hs := splitHeads(qkv, a.heads+2*a.kv, a.d)
			qk := a.rope.ForwardFor(mlx.SliceAxis(hs, 1, 0, a.heads+a.kv), c)
			q, k := mlx.SliceAxis(qk, 1, 0, a.heads), mlx.SliceAxis(qk, 1, a.heads, a.heads+a.kv)
			return a.attendRotated(q, k, mlx.SliceAxis(hs, 1, a.heads+a.kv, a.heads+2*a.kv), c)
		}
	}
	p := a.qkv.Forward(x)
	return a.attend(p[0], p[1], p[2], c)
}

// attend runs attention on projected queries, keys and values [B, L, H*D].
func (a *attention) attend(q, k, v *mlx.Array, c nn.Cache) *mlx.Array {
	q, k, v = splitHeads(q, a.heads, a.d), splitHeads(k, a.kv, a.d), splitHeads(v, a.kv, a.d)
	if a.qNorm != nil {
		q, k = a.qNorm.Forward(q), a.kNorm.Forward(k)
	}
	return a.attendRotated(a.rope.ForwardFor(q, c), a.rope.ForwardFor(k, c), v, c)
}

// attendRotated runs attention on queries and keys [B, H, L, D] that RoPE
// has rotated, and values [B, Hkv, L, D].
func (a *attention) attendRotated(q, k, v *mlx.Array, c nn.Cache) *mlx.Array {
	o := nn.CachedAttention(c, q, k, v, a.scale, mlx.Mask{Causal: true, Window: a.window}, a.softcap)
	return a.o.Forward(mergeHeads(o))
}

// gatedMLP is down(glu(gate(x), up(x))), glu being act(gate) * up.
type gatedMLP struct {
	gateUp *nn.Projections // gate and up, fused when they can be
	down   nn.Layer
	glu    func(gate, up *mlx.Array) *mlx.Array
}

func (m *gatedMLP) forward(x *mlx.Array) *mlx.Array {
	gu := m.gateUp.Forward(x)
	return m.down.Forward(m.glu(gu[0], gu[1]))
}

// geluGLU is the gating of Gemma's MLP (SwiGLU with the tanh GELU).
func geluGLU(gate, up *mlx.Array) *mlx.Array {
	a := mlx.GeluApprox(gate)
	defer a.Free()
	return mlx.Mul(a, up)
}

// newQKV loads the q, k and v projections under p (self_attn.*_proj).
func newQKV(w *nn.Weights, p string, hidden, heads, kvHeads, headDim int, bias bool) *nn.Projections {
	q, kv := heads*headDim, kvHeads*headDim
	return w.Projections([]nn.Layer{
		w.Linear(p+"self_attn.q_proj", hidden, q, bias),
		w.Linear(p+"self_attn.k_proj", hidden, kv, bias),
		w.Linear(p+"self_attn.v_proj", hidden, kv, bias),
	}, []int{q, kv, kv})
}

// newGatedMLP loads mlp.{gate,up,down}_proj under p.
func newGatedMLP(w *nn.Weights, p string, hidden, inter int, bias bool, glu func(gate, up *mlx.Array) *mlx.Array) gatedMLP {
	return loadGatedMLP(w, p+"mlp.", hidden, inter, bias, glu)
}

// loadGatedMLP loads {gate,up,down}_proj under prefix p.
func loadGatedMLP(w *nn.Weights, p string, hidden, inter int, bias bool, glu func(gate, up *mlx.Array) *mlx.Array) gatedMLP {
	return gatedMLP{
		gateUp: w.Projections([]nn.Layer{
			w.Linear(p+"gate_proj", hidden, inter, bias),
			w.Linear(p+"up_proj", hidden, inter, bias),
		}, []int{inter, inter}),
		down: w.Linear(p+"down_proj", inter, hidden, bias),
		glu:  glu,
	}
}

func newLlama(raw map[string]any, w *nn.Weights, variant llamaVariant, family string) (*llama, error) {
	var c llamaConfig
	if err := decodeConfig(raw, &c); err != nil {
		return nil, err
	}
	if err := c.defaults(); err != nil {
		return nil, err
	}
	rope, err := nn.NewRoPE(c.HeadDim, c.RopeTheta, c.RopeTrad, c.RopeScaling, c.MaxPos)
	if err != nil {
		return nil, err
	}
	return buildLlama(w, &c, rope, family, func(p string, a *attention) block {
		a.qkv = newQKV(w, p, c.Hidden, c.Heads, c.KVHeads, c.HeadDim, c.AttnBias || variant.qkvBias)
		if variant.qkNorm {
			a.qNorm = w.RMSNorm(p+"self_attn.q_norm", c.HeadDim, c.Eps, false)
			a.kNorm = w.RMSNorm(p+"self_attn.k_norm", c.HeadDim, c.Eps, false)
		}
		mlp := newGatedMLP(w, p, c.Hidden, c.Intermediate, c.MLPBias, mlx.SwiGLU)
		return &mlp
	}), nil
}

// buildLlama assembles the Llama graph for config c. layer loads what
// checkpoints of it name or fuse differently, for the layer at prefix p:
// it sets the attention's q/k/v projections (and any per-head norms) and
// returns the feed-forward block.
func buildLlama(w *nn.Weights, c *llamaConfig, rope *nn.RoPE, family string, layer func(p string, a *attention) block) *llama {
	m := &llama{}
	m.ropes = []*nn.RoPE{rope}
	m.embed = w.Embedding("model.embed_tokens", c.Vocab, c.Hidden)
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		a := attention{
			o:     w.Linear(p+"self_attn.o_proj", c.Heads*c.HeadDim, c.Hidden, c.AttnBias),
			rope:  rope,
			heads: c.Heads, kv: c.KVHeads, d: c.HeadDim,
			scale: float32(1 / math.Sqrt(float64(c.HeadDim))),
		}
		mlp := layer(p, &a)
		m.layers = append(m.layers, &llamaLayer{
			attnNorm: w.RMSNorm(p+"input_layernorm", c.Hidden, c.Eps, false),
			mlpNorm:  w.RMSNorm(p+"post_attention_layernorm", c.Hidden, c.Eps, false),
			attn:     a,
			mlp:      mlp,
		})
	}
	m.finish(w, c, family)
	return m
}

// finish loads the final norm and the output head (Phi-3 shares it) and
// records the weights and Info.
func (m *llama) finish(w *nn.Weights, c *llamaConfig, family string) {
	m.norm = w.RMSNorm("model.norm", c.Hidden, c.Eps, false)
	// A config that does not say whether the head is tied is tied exactly
	// when the checkpoint has no lm_head; a tied one may still ship a copy.
	tied := !w.Has("lm_head.weight")
	if c.Tie != nil && *c.Tie {
		tied = true
		w.Ignore("lm_head.")
	}
	if !tied {
		m.head = w.Linear("lm_head", c.Hidden, c.Vocab, false)
	}
	w.Ignore("rotary_emb.inv_freq") // a buffer some exports keep
	m.weights = w.Loaded()
	m.info = Info{Family: family, VocabSize: c.Vocab, Layers: c.Layers, HiddenSize: c.Hidden, MaxContext: c.MaxPos, EOS: c.EOS, WeightBytes: w.Bytes(), PackedBytes: w.PackedBytes(),
		MappedBytes: w.MappedBytes(), CacheBytesPerToken: int64(c.Layers) * 2 * int64(c.KVHeads*c.HeadDim) * 4}
}

func (m *llama) NewCaches() []nn.Cache {
	cs := make([]nn.Cache, len(m.layers))
	for i := range cs {
		cs[i] = nn.NewKVCache()
	}
	return cs
}

func (m *llama) Forward(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return forward(m, tokens, caches)
}

func (m *llama) Hidden(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return decode(m, func() *mlx.Array { return m.embed.Forward(tokens) }, m.layers, caches, m.norm)
}

func (l *llamaLayer) forward(x *mlx.Array, c nn.Cache) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	h := mlx.Add(x, l.attn.forward(l.attnNorm.Forward(x), c))
	return s.Keep(mlx.Add(h, l.mlp.forward(l.mlpNorm.Forward(h))))
}

func (m *llama) Logits(h *mlx.Array) *mlx.Array {
	if m.head != nil {
		return m.head.Forward(h)
	}
	return m.embed.AsLinear(h)
}
