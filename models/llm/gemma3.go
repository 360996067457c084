package llm

import (
	"encoding/json"
	"fmt"
	"math"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// Gemma 3 (text). Differences from Llama:
//   - embeddings are multiplied by sqrt(hidden_size);
//   - every norm is RMSNorm with weight (1 + w), and each block is a
//     "sandwich": norms before and after both attention and the MLP;
//   - queries and keys get a per-head RMSNorm before RoPE;
//   - most layers attend within a sliding window with their own RoPE base
//     (rope_local_base_freq); every sliding_window_pattern-th layer (or as
//     layer_types says) is global with rope_theta and rope scaling;
//   - the attention scale is query_pre_attn_scalar^-0.5;
//   - the MLP uses tanh-approximated GELU;
//   - optional soft-capping of attention scores and final logits.
//
//	h = embed(tokens) * sqrt(hidden)
//	for each layer:
//	    h += post_attn_norm(attention(input_norm(h)))
//	    h += post_ffw_norm(mlp(pre_ffw_norm(h)))
//	logits = softcap(embed as linear (norm(h)))
//
// Multimodal checkpoints (Gemma3ForConditionalGeneration) nest the text
// config under text_config and the weights under a language-model prefix;
// the vision tower is not loaded.

func init() {
	Register(Arch{
		Family: profile.Family{
			Name:          "gemma3",
			Architectures: []string{"Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"},
			ModelTypes:    []string{"gemma3_text", "gemma3"},
			Check: func(cfg *profile.Config) error {
				_, err := gemma3Config(cfg.Raw)
				return err
			},
		},
		New: func(cfg *profile.Config, w *nn.Weights) (Model, error) { return newGemma3(cfg.Raw, w) },
	})
}

type gemma3Cfg struct {
	Hidden         int                        `json:"hidden_size"`
	Layers         int                        `json:"num_hidden_layers"`
	Intermediate   int                        `json:"intermediate_size"`
	Heads          int                        `json:"num_attention_heads"`
	KVHeads        int                        `json:"num_key_value_heads"`
	HeadDim        int                        `json:"head_dim"`
	Vocab          int                        `json:"vocab_size"`
	Eps            float64                    `json:"rms_norm_eps"`
	RopeTheta      float64                    `json:"rope_theta"`
	RopeLocal      float64                    `json:"rope_local_base_freq"`
	RopeScaling    *nn.RopeScaling            `json:"rope_scaling"`
	RopeParams     map[string]json.RawMessage `json:"rope_parameters"`
	QueryScalar    float64                    `json:"query_pre_attn_scalar"`
	Window         int                        `json:"sliding_window"`
	Pattern        int                        `json:"sliding_window_pattern"`
	LayerTypes     []string                   `json:"layer_types"`
	AttnSoftcap    *float64                   `json:"attn_logit_softcapping"`
	FinalSoftcap   *float64                   `json:"final_logit_softcapping"`
	MaxPos         int                        `json:"max_position_embeddings"`
	Activation     string                     `json:"hidden_activation"`
	EOS            IDList                     `json:"eos_token_id"`
	globalScaling  *nn.RopeScaling
	slidingScaling *nn.RopeScaling
}

// gemma3Config reads the text config (nested or not) and fills in the
// defaults of transformers' Gemma3TextConfig, which real multimodal configs
// rely on by omitting fields.
func gemma3Config(raw map[string]any) (*gemma3Cfg, error) {
	c := &gemma3Cfg{
		Hidden: 2304, Layers: 26, Intermediate: 9216, Heads: 8, KVHeads: 4, HeadDim: 256,
		Vocab: 262208, Eps: 1e-6, RopeTheta: 1e6, RopeLocal: 1e4, QueryScalar: 256,
		Window: 4096, Pattern: 6, MaxPos: 131072,
	}
	text, nested, at := raw, false, ""
	if tc, ok := raw["text_config"].(map[string]any); ok {
		text, nested, at = tc, true, "text_config."
	}
	if err := decodeConfig(text, c); err != nil {
		return nil, err
	}
	if len(c.EOS) == 0 && nested {
		var top struct {
			EOS IDList `json:"eos_token_id"`
		}
		if err := decodeConfig(raw, &top); err == nil {
			c.EOS = top.EOS
		}
	}
	if c.Activation != "" && c.Activation != "gelu_pytorch_tanh" {
		return nil, fmt.Errorf("hidden_activation %q is not supported (only gelu_pytorch_tanh)", c.Activation)
	}
	if c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0 || c.Layers <= 0 || c.Window <= 0 {
		return nil, fmt.Errorf("bad attention layout: %d heads, %d kv heads, %d layers, window %d", c.Heads, c.KVHeads, c.Layers, c.Window)
	}
	if c.LayerTypes != nil {
		if err := checkLayerTypes(at+"layer_types", c.LayerTypes, c.Layers, "sliding_attention", "full_attention"); err != nil {
			return nil, err
		}
	}
	c.globalScaling = c.RopeScaling.At(at + "rope_scaling")
	// transformers v5 writes rope settings per layer type (or flat).
	params, _ := text["rope_parameters"].(map[string]any)
	if _, flat := params["rope_type"]; flat {
		var s nn.RopeScaling
		if err := decodeConfig(params, &s); err != nil {
			return nil, err
		}
		c.globalScaling = s.At(at + "rope_parameters")
		c.RopeTheta = positive(s.RopeTheta, c.RopeTheta)
	} else if err := checkRopeKinds(at+"rope_parameters", params, "sliding_attention", "full_attention"); err != nil {
		return nil, err
	}
	for kind, v := range params {
		if _, nested := v.(map[string]any); !nested {
			continue // a flat rope_parameters object: not per type
		}
		s := (&nn.RopeScaling{}).At(at + "rope_parameters." + kind)
		if err := json.Unmarshal(c.RopeParams[kind], s); err != nil {
			return nil, fmt.Errorf("config.json: %s: %w", s.Key, err)
		}
		switch kind {
		case "full_attention":
			c.globalScaling = s
			c.RopeTheta = positive(s.RopeTheta, c.RopeTheta)
		case "sliding_attention":
			c.slidingScaling = s
			c.RopeLocal = positive(s.RopeTheta, c.RopeLocal)
		}
	}
	for _, s := range []*nn.RopeScaling{c.globalScaling, c.slidingScaling} {
		if err := nn.CheckRopeScaling(s); err != nil {
			return nil, fmt.Errorf("config.json: %w", err)
		}
	}
	return c, nil
}

func (c *gemma3Cfg) sliding(i int) bool {
	if c.LayerTypes != nil {
		return c.LayerTypes[i] == "sliding_attention"
	}
	return c.Pattern <= 0 || (i+1)%c.Pattern != 0
}

type gemma3 struct {
	base
	embed      *nn.Embedding
	embedScale float64
	layers     []*gemma3Layer
	norm       *nn.RMSNorm
	cfg        *gemma3Cfg
	softcap    float64
}

type gemma3Layer struct {
	inputNorm, postAttnNorm, preFFWNorm, postFFWNorm *nn.RMSNorm
	attn                                             attention
	mlp                                              gatedMLP
}

// gemma3Prefixes are where checkpoints put the text model: Gemma3ForCausalLM,
// mlx-lm's multimodal wrapper, and transformers' newer multimodal layout.
var gemma3Prefixes = []string{"model.", "language_model.model.", "model.language_model."}

func newGemma3(raw map[string]any, w *nn.Weights) (*gemma3, error) {
	c, err := gemma3Config(raw)
	if err != nil {
		return nil, err
	}
	pre, err := textPrefix(w, "embed_tokens", gemma3Prefixes...)
	if err != nil {
		return nil, err
	}
	global, err := nn.NewRoPE(c.HeadDim, c.RopeTheta, false, c.globalScaling, c.MaxPos)
	if err != nil {
		return nil, err
	}
	local, err := nn.NewRoPE(c.HeadDim, c.RopeLocal, false, c.slidingScaling, c.MaxPos)
	if err != nil {
		global.Close()
		return nil, err
	}
	m := &gemma3{cfg: c}
	m.ropes = []*nn.RoPE{global, local}
	// mlx-lm rounds the scale to bfloat16 (transformers to the weights'
	// dtype, bfloat16 in every released checkpoint); do the same.
	m.embedScale = float64(mlx.BF16ToF32(mlx.F32ToBF16(float32(math.Sqrt(float64(c.Hidden))))))
	if c.FinalSoftcap != nil {
		m.softcap = *c.FinalSoftcap
	}
	m.embed = w.Embedding(pre+"embed_tokens", c.Vocab, c.Hidden)
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("%slayers.%d.", pre, i)
		a := attention{
			qkv:   newQKV(w, p, c.Hidden, c.Heads, c.KVHeads, c.HeadDim, false),
			o:     w.Linear(p+"self_attn.o_proj", c.Heads*c.HeadDim, c.Hidden, false),
			qNorm: w.RMSNorm(p+"self_attn.q_norm", c.HeadDim, c.Eps, true),
			kNorm: w.RMSNorm(p+"self_attn.k_norm", c.HeadDim, c.Eps, true),
			rope:  global,
			heads: c.Heads, kv: c.KVHeads, d: c.HeadDim,
			scale: float32(1 / math.Sqrt(c.QueryScalar)),
		}
		if c.AttnSoftcap != nil {
			a.softcap = float32(*c.AttnSoftcap)
		}
		if c.sliding(i) {
			a.rope, a.window = local, c.Window
		}
		m.layers = append(m.layers, &gemma3Layer{
			inputNorm:    w.RMSNorm(p+"input_layernorm", c.Hidden, c.Eps, true),
			postAttnNorm: w.RMSNorm(p+"post_attention_layernorm", c.Hidden, c.Eps, true),
			preFFWNorm:   w.RMSNorm(p+"pre_feedforward_layernorm", c.Hidden, c.Eps, true),
			postFFWNorm:  w.RMSNorm(p+"post_feedforward_layernorm", c.Hidden, c.Eps, true),
			attn:         a,
			mlp:          newGatedMLP(w, p, c.Hidden, c.Intermediate, false, geluGLU),
		})
	}
	m.norm = w.RMSNorm(pre+"norm", c.Hidden, c.Eps, true)
	// The head is always the tied embedding; some exports still ship a
	// copy, and multimodal ones a vision tower the text graph ignores.
	w.Ignore("lm_head.", "vision_tower", "multi_modal_projector", "rotary_emb.inv_freq")
	m.weights = w.Loaded()
	m.info = Info{Family: "gemma3", VocabSize: c.Vocab, Layers: c.Layers, HiddenSize: c.Hidden, MaxContext: c.MaxPos, EOS: c.EOS, WeightBytes: w.Bytes(), PackedBytes: w.PackedBytes(),
		CacheBytesPerToken: int64(c.Layers) * 2 * int64(c.KVHeads*c.HeadDim) * 4}
	return m, nil
}

func (m *gemma3) NewCaches() []nn.Cache {
	cs := make([]nn.Cache, len(m.layers))
	for i := range cs {
		if m.cfg.sliding(i) {
			cs[i] = nn.NewRotatingCache(m.cfg.Window)
		} else {
			cs[i] = nn.NewKVCache()
		}
	}
	return cs
}

func (m *gemma3) Forward(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return forward(m, tokens, caches)
}

func (m *gemma3) Hidden(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return decode(m, func() *mlx.Array { return mlx.MulScalar(m.embed.Forward(tokens), m.embedScale) }, m.layers, caches, m.norm)
}

func (l *gemma3Layer) forward(x *mlx.Array, c nn.Cache) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	h := mlx.Add(x, l.postAttnNorm.Forward(l.attn.forward(l.inputNorm.Forward(x), c)))
	return s.Keep(mlx.Add(h, l.postFFWNorm.Forward(l.mlp.forward(l.preFFWNorm.Forward(h)))))
}

func (m *gemma3) Logits(h *mlx.Array) *mlx.Array {
	lg := m.embed.AsLinear(h)
	if m.softcap <= 0 {
		return lg
	}
	s := mlx.NewScope()
	defer s.Close()
	return s.Keep(mlx.MulScalar(mlx.Tanh(mlx.DivScalar(lg, m.softcap)), m.softcap))
}
