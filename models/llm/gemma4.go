package llm

import (
	"encoding/json"
	"fmt"
	"math"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// Gemma 4 (text), as transformers' modeling_gemma4 defines it. Against
// Gemma 3:
//   - norms multiply by their weight as stored (no 1 + w);
//   - sliding layers (head_dim, num_key_value_heads) and full layers
//     (global_head_dim; with attention_k_eq_v, num_global_key_value_heads
//     and no v_proj: the values are the raw keys) have different shapes;
//   - queries and keys get an RMSNorm per head, values one without weight;
//   - attention scale 1 (the norms set the scale);
//   - full layers use "proportional" RoPE: only partial_rotary_factor of
//     the pairs turn, at frequencies set by the whole head (nn.NewRoPE);
//   - every layer ends by multiplying the stream by its layer_scalar;
//   - KV sharing: the last num_kv_shared_layers layers compute no keys or
//     values and attend over those of the last earlier layer of their kind.
//
//	h = embed(tokens) * sqrt(hidden)
//	for each layer:
//	    h += post_attn_norm(attention(input_norm(h)))
//	    h += post_ffw_norm(mlp(pre_ffw_norm(h)))
//	    h *= layer_scalar
//	logits = softcap(embed as linear (norm(h)))
//
// Per-layer embeddings (E2B, E4B) are in gemma4_ple.go, the
// mixture-of-experts block (26B-A4B) in gemma4_moe.go.

func init() {
	Register(Arch{
		Family: profile.Family{
			Name:          "gemma4",
			Architectures: []string{"Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"},
			ModelTypes:    []string{"gemma4_text", "gemma4"},
			Check: func(cfg *profile.Config) error {
				_, err := gemma4Config(cfg.Raw)
				return err
			},
			Inactive: func(cfg *profile.Config) int64 {
				c, err := gemma4Config(cfg.Raw)
				if err != nil || !c.MoE {
					return 0
				}
				return skippedExperts(c.Layers, c.Experts, c.TopK, c.Hidden, c.MoEInter)
			},
		},
		New: func(cfg *profile.Config, w *nn.Weights) (Model, error) { return newGemma4(cfg.Raw, w) },
	})
}

// gemma4Keys are the text config keys gemma4Config reads or knows to be
// inert here (per-layer and MoE sizes are checked through their switches).
var gemma4Keys = []string{
	"hidden_size", "num_hidden_layers", "intermediate_size", "num_attention_heads", "num_key_value_heads",
	"num_global_key_value_heads", "head_dim", "global_head_dim", "vocab_size", "rms_norm_eps", "rope_parameters",
	"sliding_window", "layer_types", "final_logit_softcapping", "attn_logit_softcapping", "max_position_embeddings",
	"hidden_activation", "attention_bias", "attention_k_eq_v", "num_kv_shared_layers", "use_double_wide_mlp",
	"hidden_size_per_layer_input", "vocab_size_per_layer_input", "enable_moe_block", "num_experts", "top_k_experts",
	"moe_intermediate_size", "use_bidirectional_attention",
}

type gemma4Cfg struct {
	Hidden        int                        `json:"hidden_size"`
	Layers        int                        `json:"num_hidden_layers"`
	Intermediate  int                        `json:"intermediate_size"`
	Heads         int                        `json:"num_attention_heads"`
	KVHeads       int                        `json:"num_key_value_heads"`
	GlobalKVHeads int                        `json:"num_global_key_value_heads"`
	HeadDim       int                        `json:"head_dim"`
	GlobalHeadDim int                        `json:"global_head_dim"`
	Vocab         int                        `json:"vocab_size"`
	Eps           float64                    `json:"rms_norm_eps"`
	RopeParams    map[string]json.RawMessage `json:"rope_parameters"`
	Window        int                        `json:"sliding_window"`
	LayerTypes    []string                   `json:"layer_types"`
	FinalSoftcap  *float64                   `json:"final_logit_softcapping"`
	AttnSoftcap   *float64                   `json:"attn_logit_softcapping"`
	MaxPos        int                        `json:"max_position_embeddings"`
	Activation    string                     `json:"hidden_activation"`
	AttnBias      bool                       `json:"attention_bias"`
	KEqV          bool                       `json:"attention_k_eq_v"`
	KVShared      int                        `json:"num_kv_shared_layers"`
	DoubleWide    bool                       `json:"use_double_wide_mlp"`
	PerLayer      int                        `json:"hidden_size_per_layer_input"`
	VocabPL       int                        `json:"vocab_size_per_layer_input"`
	MoE           bool                       `json:"enable_moe_block"`
	Experts       int                        `json:"num_experts"`
	TopK          int                        `json:"top_k_experts"`
	MoEInter      int                        `json:"moe_intermediate_size"`
	Bidirectional *string                    `json:"use_bidirectional_attention"`
	EOS           IDList                     `json:"eos_token_id"`
	Tie           *bool                      `json:"tie_word_embeddings"`
	rope          map[string]*nn.RopeScaling // per layer kind
	src           []int                      // per layer: whose keys and values it reads (itself unless shared)
}

// gemma4Config reads the text config, flat (gemma4_text) or under
// text_config (the release's Gemma4ForConditionalGeneration, whose other
// keys describe the vision and audio towers Hark does not load).
func gemma4Config(raw map[string]any) (*gemma4Cfg, error) {
	text, at := raw, ""
	if tc, ok := raw["text_config"].(map[string]any); ok {
		text, at = tc, "text_config."
	}
	where := "config.json"
	if at != "" {
		where = "config.json text_config"
	}
	if err := checkKeysAt(where, text, gemma4Keys...); err != nil {
		return nil, err
	}
	c := &gemma4Cfg{Eps: 1e-6}
	if err := decodeConfig(text, c); err != nil {
		return nil, err
	}
	if len(c.EOS) == 0 && at != "" {
		var top struct {
			EOS IDList `json:"eos_token_id"`
		}
		if err := decodeConfig(raw, &top); err == nil {
			c.EOS = top.EOS
		}
	}
	if c.Hidden <= 0 || c.Layers <= 0 || c.Intermediate <= 0 || c.Heads <= 0 || c.KVHeads <= 0 || c.HeadDim <= 0 || c.Vocab <= 0 {
		return nil, fmt.Errorf("%s needs positive hidden_size, num_hidden_layers, intermediate_size, num_attention_heads, num_key_value_heads, head_dim and vocab_size", where)
	}
	c.GlobalHeadDim = positive(c.GlobalHeadDim, c.HeadDim)
	c.GlobalKVHeads = positive(c.GlobalKVHeads, c.KVHeads)
	c.VocabPL = positive(c.VocabPL, c.Vocab)
	switch {
	case c.PerLayer < 0 || c.VocabPL < 0:
		return nil, fmt.Errorf("config.json: %shidden_size_per_layer_input %d and vocab_size_per_layer_input %d must not be negative", at, c.PerLayer, c.VocabPL)
	case c.MoE && (c.Experts <= 0 || c.TopK <= 0 || c.TopK > c.Experts || c.MoEInter <= 0):
		return nil, fmt.Errorf("config.json: %senable_moe_block needs top_k_experts %d between 1 and num_experts %d, and a positive moe_intermediate_size (%d)", at, c.TopK, c.Experts, c.MoEInter)
	case c.AttnSoftcap != nil:
		return nil, fmt.Errorf("config.json: %sattn_logit_softcapping %v: Gemma 4 attention has no soft-capping", at, *c.AttnSoftcap)
	case c.Activation != "" && c.Activation != "gelu_pytorch_tanh":
		return nil, fmt.Errorf("config.json: %shidden_activation %q is not supported (only gelu_pytorch_tanh)", at, c.Activation)
	case c.Bidirectional != nil && *c.Bidirectional != "vision":
		// "vision" only unmasks image tokens, which a text prompt has none of.
		return nil, fmt.Errorf("config.json: %suse_bidirectional_attention %q is not supported (a causal LM)", at, *c.Bidirectional)
	case c.Heads%c.KVHeads != 0 || c.Heads%c.GlobalKVHeads != 0:
		return nil, fmt.Errorf("config.json: %snum_attention_heads %d is not a multiple of the key/value heads (%d, %d)", at, c.Heads, c.KVHeads, c.GlobalKVHeads)
	}
	if err := checkLayerTypes(at+"layer_types", c.LayerTypes, c.Layers, "sliding_attention", "full_attention"); err != nil {
		return nil, err
	}
	if err := c.readRope(text, at); err != nil {
		return nil, err
	}
	return c, c.shareKV(at)
}

// readRope reads rope_parameters per layer kind, with transformers'
// defaults when absent. Only the types Gemma 4 defines are accepted: a
// default RoPE over the whole head, or a proportional one.
func (c *gemma4Cfg) readRope(text map[string]any, at string) error {
	c.rope = map[string]*nn.RopeScaling{
		"sliding_attention": {Type: "default", RopeTheta: 1e4},
		"full_attention":    {Type: "proportional", RopeTheta: 1e6, PartialRotaryFactor: 0.25},
	}
	if c.RopeParams == nil {
		return nil
	}
	params, _ := text["rope_parameters"].(map[string]any)
	if _, flat := params["rope_type"]; flat {
		return fmt.Errorf("config.json: %srope_parameters must give settings per layer kind (full_attention, sliding_attention)", at)
	}
	if err := checkRopeKinds(at+"rope_parameters", params, "sliding_attention", "full_attention"); err != nil {
		return err
	}
	for kind, msg := range c.RopeParams {
		key := at + "rope_parameters." + kind
		s := (&nn.RopeScaling{}).At(key)
		if err := json.Unmarshal(msg, s); err != nil {
			return fmt.Errorf("config.json: %s: %w", key, err)
		}
		if err := nn.CheckRopeScaling(s); err != nil {
			return fmt.Errorf("config.json: %w", err)
		}
		switch k := s.Kind(); {
		case k != "default" && k != "proportional":
			return fmt.Errorf("config.json: %s.rope_type %q is not one Gemma 4 uses (default, proportional)", key, k)
		case k == "default" && s.PartialRotaryFactor != 0 && s.PartialRotaryFactor != 1:
			return fmt.Errorf("config.json: %s.partial_rotary_factor %v needs rope_type proportional", key, s.PartialRotaryFactor)
		case s.RopeTheta <= 0:
			return fmt.Errorf("config.json: %s.rope_theta must be positive", key)
		}
		c.rope[kind] = s
	}
	return nil
}

// shareKV finds, for each of the last num_kv_shared_layers layers, the
// last earlier layer of its kind, whose keys and values it reads.
func (c *gemma4Cfg) shareKV(at string) error {
	first := c.Layers - c.KVShared
	if c.KVShared < 0 || first < 1 {
		return fmt.Errorf("config.json: %snum_kv_shared_layers %d must leave at least one of the %d layers computing keys and values", at, c.KVShared, c.Layers)
	}
	c.src = make([]int, c.Layers)
	for i := range c.src {
		c.src[i] = i
		if i < first {
			continue
		}
		c.src[i] = -1
		for j := first - 1; j >= 0; j-- {
			if c.LayerTypes[j] == c.LayerTypes[i] {
				c.src[i] = j
				break
			}
		}
		if c.src[i] < 0 {
			return fmt.Errorf("config.json: %snum_kv_shared_layers %d: layer %d (%s) shares keys and values, but no earlier layer of its kind computes them", at, c.KVShared, i, c.LayerTypes[i])
		}
	}
	if c.Window <= 0 && len(c.LayerTypes) > 0 {
		for _, t := range c.LayerTypes {
			if t == "sliding_attention" {
				return fmt.Errorf("config.json: %ssliding_window must be positive for sliding_attention layers", at)
			}
		}
	}
	return nil
}

type gemma4 struct {
	base
	embed      *nn.Embedding
	embedScale float64
	layers     []*gemma4Layer
	norm       *nn.RMSNorm
	head       nn.Layer // nil when tied to embed
	cfg        *gemma4Cfg
	softcap    float64
	isSource   []bool // per layer: other layers read its keys and values
	ple        *gemma4PLE
}

type gemma4Layer struct {
	inputNorm, postAttnNorm, preFFWNorm, postFFWNorm *nn.RMSNorm
	attn                                             gemma4Attention
	mlp                                              gatedMLP
	ple                                              *gemma4PLELayer // nil without per-layer embeddings
	moe                                              *gemma4MoE      // nil without experts
	scalar                                           float64         // layer_scalar
}

type gemma4Attention struct {
	proj                *nn.Projections // q, then k and v when it computes them
	o                   nn.Layer
	qNorm, kNorm, vNorm *nn.RMSNorm
	rope                *nn.RoPE
	heads, kv, d        int
	window              int
	kEqV                bool // the values are the raw keys
	shared              bool // reads another layer's keys and values
}

func newGemma4(raw map[string]any, w *nn.Weights) (*gemma4, error) {
	c, err := gemma4Config(raw)
	if err != nil {
		return nil, err
	}
	pre, err := textPrefix(w, "embed_tokens", "model.language_model.", "model.", "language_model.model.")
	if err != nil {
		return nil, err
	}
	m := &gemma4{cfg: c}
	ropes := map[string]*nn.RoPE{}
	for _, kind := range []string{"sliding_attention", "full_attention"} {
		d := c.HeadDim
		if kind == "full_attention" {
			d = c.GlobalHeadDim
		}
		s := c.rope[kind]
		r, err := nn.NewRoPE(d, s.RopeTheta, false, s, c.MaxPos)
		if err != nil {
			m.Close()
			return nil, err
		}
		ropes[kind] = r
		m.ropes = append(m.ropes, r)
	}
	// As Gemma 3: the scale rounded to bfloat16, as transformers casts it
	// to the released weights' dtype.
	m.embedScale = float64(mlx.BF16ToF32(mlx.F32ToBF16(float32(math.Sqrt(float64(c.Hidden))))))
	if c.FinalSoftcap != nil {
		m.softcap = *c.FinalSoftcap
	}
	m.embed = w.Embedding(pre+"embed_tokens", c.Vocab, c.Hidden)
	m.ple = newGemma4PLE(w, c, pre)
	first := c.Layers - c.KVShared
	for i := 0; i < c.Layers; i++ {
		m.layers = append(m.layers, newGemma4Layer(w, c, fmt.Sprintf("%slayers.%d.", pre, i), i, i >= first, ropes))
	}
	m.norm = w.RMSNorm(pre+"norm", c.Hidden, c.Eps, false)
	tied := !w.Has("lm_head.weight") || c.Tie == nil || *c.Tie
	if tied {
		w.Ignore("lm_head.")
	} else {
		m.head = w.Linear("lm_head", c.Hidden, c.Vocab, false)
	}
	w.Ignore("vision_tower", "audio_tower", "embed_vision", "embed_audio", "multi_modal_projector", "rotary_emb")
	m.weights = w.Loaded()
	var perToken int64
	for i, l := range m.layers {
		if !l.attn.shared {
			perToken += 2 * int64(l.attn.kv*l.attn.d) * 4
		}
		m.isSource = append(m.isSource, false)
		if j := c.src[i]; j != i {
			m.isSource[j] = true
		}
	}
	m.info = Info{Family: "gemma4", VocabSize: c.Vocab, Layers: c.Layers, HiddenSize: c.Hidden, MaxContext: c.MaxPos, EOS: c.EOS,
		WeightBytes: w.Bytes(), PackedBytes: w.PackedBytes(), CacheBytesPerToken: perToken}
	return m, nil
}

func newGemma4Layer(w *nn.Weights, c *gemma4Cfg, p string, i int, shared bool, ropes map[string]*nn.RoPE) *gemma4Layer {
	kind := c.LayerTypes[i]
	a := gemma4Attention{heads: c.Heads, kv: c.KVHeads, d: c.HeadDim, rope: ropes[kind], shared: shared}
	if kind == "full_attention" {
		a.d, a.kEqV = c.GlobalHeadDim, c.KEqV
		if c.KEqV {
			a.kv = c.GlobalKVHeads
		}
	} else {
		a.window = c.Window
	}
	q := w.Linear(p+"self_attn.q_proj", c.Hidden, a.heads*a.d, c.AttnBias)
	a.qNorm = w.RMSNorm(p+"self_attn.q_norm", a.d, c.Eps, false)
	switch {
	case shared:
		// transformers builds no k/v weights here; other exports keep
		// them unused.
		w.Ignore(p+"self_attn.k_proj", p+"self_attn.v_proj", p+"self_attn.k_norm", p+"self_attn.v_norm")
		a.proj = w.Projections([]nn.Layer{q}, []int{a.heads * a.d})
	case a.kEqV:
		k := w.Linear(p+"self_attn.k_proj", c.Hidden, a.kv*a.d, c.AttnBias)
		a.proj = w.Projections([]nn.Layer{q, k}, []int{a.heads * a.d, a.kv * a.d})
	default:
		k := w.Linear(p+"self_attn.k_proj", c.Hidden, a.kv*a.d, c.AttnBias)
		v := w.Linear(p+"self_attn.v_proj", c.Hidden, a.kv*a.d, c.AttnBias)
		a.proj = w.Projections([]nn.Layer{q, k, v}, []int{a.heads * a.d, a.kv * a.d, a.kv * a.d})
	}
	if !shared {
		a.kNorm = w.RMSNorm(p+"self_attn.k_norm", a.d, c.Eps, false)
		a.vNorm = &nn.RMSNorm{Eps: float32(c.Eps)}
	}
	a.o = w.Linear(p+"self_attn.o_proj", a.heads*a.d, c.Hidden, c.AttnBias)
	inter := c.Intermediate
	if shared && c.DoubleWide {
		inter *= 2
	}
	l := &gemma4Layer{
		inputNorm:    w.RMSNorm(p+"input_layernorm", c.Hidden, c.Eps, false),
		postAttnNorm: w.RMSNorm(p+"post_attention_layernorm", c.Hidden, c.Eps, false),
		preFFWNorm:   w.RMSNorm(p+"pre_feedforward_layernorm", c.Hidden, c.Eps, false),
		postFFWNorm:  w.RMSNorm(p+"post_feedforward_layernorm", c.Hidden, c.Eps, false),
		attn:         a,
		mlp:          newGatedMLP(w, p, c.Hidden, inter, false, geluGLU),
		ple:          newGemma4PLELayer(w, c, p),
		moe:          newGemma4MoE(w, c, p),
		scalar:       1,
	}
	if s := w.Array(p+"layer_scalar", 1); s != nil {
		l.scalar = float64(s.Float32s()[0])
	}
	return l
}

// NewCaches gives sliding layers a rotating cache, full ones a growing
// cache, and sharing layers a cache that holds nothing of its own.
func (m *gemma4) NewCaches() []nn.Cache {
	cs := make([]nn.Cache, len(m.layers))
	for i, l := range m.layers {
		switch {
		case l.attn.shared:
			cs[i] = nn.NewSharedCache(cs[m.cfg.src[i]])
		case l.attn.window > 0:
			cs[i] = nn.NewRotatingCache(l.attn.window)
		default:
			cs[i] = nn.NewKVCache()
		}
	}
	return cs
}

func (m *gemma4) Forward(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return forward(m, tokens, caches)
}

// Hidden runs the layers in order, handing the keys and values each
// source layer attended over to the layers that share them.
func (m *gemma4) Hidden(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	caches = checkCaches(m, caches)
	s := mlx.NewScope()
	defer s.Close()
	off := caches[0].Offset()
	h := mlx.MulScalar(m.embed.Forward(tokens), m.embedScale)
	var ple *mlx.Array
	if m.ple != nil {
		ple = m.ple.inputs(tokens, h)
	}
	kv := make([][2]*mlx.Array, len(m.layers))
	for i, l := range m.layers {
		var out *[2]*mlx.Array
		if m.isSource[i] {
			out = &kv[i]
		}
		var in *mlx.Array
		if ple != nil {
			in = m.ple.at(ple, i)
		}
		h = l.forward(h, caches[i], off, out, kv[m.cfg.src[i]], in)
	}
	return s.Keep(m.norm.Forward(h))
}

// forward runs the layer on x at position off. A layer whose keys and
// values others share leaves what it attended over in out (kept in the
// caller's scope, until the forward pass ends); a sharing layer reads
// them from in. ple is its per-layer input (nil without).
func (l *gemma4Layer) forward(x *mlx.Array, c nn.Cache, off int, out *[2]*mlx.Array, in [2]*mlx.Array, ple *mlx.Array) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	a := &l.attn
	p := a.proj.Forward(l.inputNorm.Forward(x))
	q := a.rope.Forward(a.qNorm.Forward(splitHeads(p[0], a.heads, a.d)), off)
	k, v := in[0], in[1]
	if !a.shared {
		raw := splitHeads(p[1], a.kv, a.d)
		vs := raw
		if !a.kEqV {
			vs = splitHeads(p[2], a.kv, a.d)
		}
		k, v = c.Update(a.rope.Forward(a.kNorm.Forward(raw), off), a.vNorm.Forward(vs))
		if out != nil {
			out[0], out[1] = s.Keep(k), s.Keep(v)
		}
	}
	o := nn.Attention(q, k, v, 1, mlx.Mask{Causal: true, Window: a.window}, 0)
	h := mlx.Add(x, l.postAttnNorm.Forward(a.o.Forward(mergeHeads(o))))
	if dense := l.mlp.forward(l.preFFWNorm.Forward(h)); l.moe != nil {
		h = mlx.Add(h, l.moe.forward(h, dense, l.postFFWNorm))
	} else {
		h = mlx.Add(h, l.postFFWNorm.Forward(dense))
	}
	if l.ple != nil {
		h = mlx.Add(h, l.ple.forward(h, ple))
	}
	if l.scalar != 1 {
		h = mlx.MulScalar(h, l.scalar)
	}
	return s.Keep(h)
}

func (m *gemma4) Logits(h *mlx.Array) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	var lg *mlx.Array
	if m.head != nil {
		lg = m.head.Forward(h)
	} else {
		lg = m.embed.AsLinear(h)
	}
	if m.softcap > 0 {
		lg = mlx.MulScalar(mlx.Tanh(mlx.DivScalar(lg, m.softcap)), m.softcap)
	}
	return s.Keep(lg)
}
