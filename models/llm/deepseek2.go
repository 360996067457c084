package llm

import (
	"fmt"
	"math"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// DeepSeek-V2 (and V2-Lite, q_lora_rank null): multi-head latent
// attention and a DeepSeekMoE feed-forward. GLM-4.x MoE Lite
// (GLM-4.7-Flash, glm4_moe_lite) is the same graph under other config
// keys, with DeepSeek-V3's router: sigmoid scores, chosen by score plus
// e_score_correction_bias, weighted by the scores alone (renormalised
// when norm_topk_prob) and always scaled by routed_scaling_factor.
//
//	q      = q_b(norm(q_a(x)))  (or q_proj(x))    per head [nope | rope]
//	latent = kv_a(x) = [c (kv_lora_rank) | k_pe (rope, one head)]
//	k, v   = kv_b(norm(c))                         per head [nope | v]
//	attention over [q_nope·k_nope + q_pe·k_pe] * scale, RoPE on the rope parts
//
// The cache keeps only the latent vector (norm(c) as keys, rotated k_pe as
// values: kv_lora_rank + rope floats per token instead of full K and V),
// and attention runs in the absorbed form: q_nope is folded through kv_b's
// key half into the latent space and the latent context through its value
// half, which is the same product regrouped. The first
// first_k_dense_replace layers have a dense MLP; the rest route each token
// to num_experts_per_tok of n_routed_experts experts (softmax scores,
// greedy top-k, scaled by routed_scaling_factor unless renormalised) plus
// n_shared_experts always-on experts.
func init() {
	for _, f := range []struct {
		name, arch string
		glm        bool
	}{{"deepseek_v2", "DeepseekV2ForCausalLM", false}, {"glm4_moe_lite", "Glm4MoeLiteForCausalLM", true}} {
		glm := f.glm
		Register(Arch{
			Family: profile.Family{Name: f.name, Architectures: []string{f.arch}, ModelTypes: []string{f.name},
				Check: func(cfg *profile.Config) error { _, err := deepseekConfigOf(cfg.Raw, glm); return err },
				Inactive: func(cfg *profile.Config) int64 {
					c, err := deepseekConfigOf(cfg.Raw, glm)
					if err != nil {
						return 0
					}
					return sparseSkipped(c.Layers, c.sparse, c.Routed, c.TopK, c.Hidden, c.MoEInter)
				}},
			New: func(cfg *profile.Config, w *nn.Weights) (Model, error) { return newDeepseek(cfg.Raw, w, glm) },
		})
	}
}

type deepseekConfig struct {
	Hidden      int             `json:"hidden_size"`
	Layers      int             `json:"num_hidden_layers"`
	Inter       int             `json:"intermediate_size"`
	Heads       int             `json:"num_attention_heads"`
	Vocab       int             `json:"vocab_size"`
	Eps         float64         `json:"rms_norm_eps"`
	RopeTheta   float64         `json:"rope_theta"`
	RopeScaling *nn.RopeScaling `json:"rope_scaling"`
	MaxPos      int             `json:"max_position_embeddings"`
	Tie         *bool           `json:"tie_word_embeddings"`
	AttnBias    bool            `json:"attention_bias"`
	HiddenAct   string          `json:"hidden_act"`
	EOS         IDList          `json:"eos_token_id"`
	QLora       *int            `json:"q_lora_rank"`
	KVLora      int             `json:"kv_lora_rank"`
	Nope        int             `json:"qk_nope_head_dim"`
	Rope        int             `json:"qk_rope_head_dim"`
	V           int             `json:"v_head_dim"`
	MoEInter    int             `json:"moe_intermediate_size"`
	Routed      int             `json:"n_routed_experts"`
	Shared      int             `json:"n_shared_experts"`
	TopK        int             `json:"num_experts_per_tok"`
	NormTopK    bool            `json:"norm_topk_prob"`
	Scale       float64         `json:"routed_scaling_factor"`
	FirstDense  int             `json:"first_k_dense_replace"`
	Freq        int             `json:"moe_layer_freq"`
	TopKMethod  string          `json:"topk_method"`
	Scoring     string          `json:"scoring_func"`
	NGroup      int             `json:"n_group"`
	TopKGroup   int             `json:"topk_group"`
	// GLM-4.x MoE Lite's spellings (glmKeys)
	RopeParams     *nn.RopeScaling `json:"rope_parameters"`
	RopeInterleave *bool           `json:"rope_interleave"`
	Partial        *float64        `json:"partial_rotary_factor"`
	MLPTypes       []string        `json:"mlp_layer_types"`
	NextN          int             `json:"num_nextn_predict_layers"`
}

var deepseekKeys = []string{
	"hidden_size", "num_hidden_layers", "intermediate_size", "num_attention_heads", "num_key_value_heads", "vocab_size",
	"rms_norm_eps", "rope_theta", "rope_scaling", "max_position_embeddings", "attention_bias", "hidden_act",
	"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "moe_intermediate_size",
	"n_routed_experts", "n_shared_experts", "num_experts_per_tok", "norm_topk_prob", "routed_scaling_factor",
	"first_k_dense_replace", "moe_layer_freq", "topk_method", "scoring_func", "n_group", "topk_group",
	"aux_loss_alpha", "seq_aux", "ep_size",
}

// glmKeys are what GLM-4.x MoE Lite's config adds: transformers v5's
// rope_parameters and mlp_layer_types, the rotary layout, and the
// multi-token-prediction layers kept after the last one (skipped here).
var glmKeys = []string{"rope_parameters", "rope_interleave", "partial_rotary_factor", "mlp_layer_types", "num_nextn_predict_layers"}

func deepseekConfigOf(raw map[string]any, glm bool) (*deepseekConfig, error) {
	known := deepseekKeys
	if glm {
		known = append(append([]string(nil), deepseekKeys...), glmKeys...)
	}
	if err := checkKeys(raw, known...); err != nil {
		return nil, err
	}
	var c deepseekConfig
	if err := decodeConfig(raw, &c); err != nil {
		return nil, err
	}
	if c.RopeParams != nil && c.RopeScaling == nil {
		c.RopeScaling = c.RopeParams.At("rope_parameters")
		c.RopeTheta = positive(c.RopeTheta, c.RopeParams.RopeTheta)
	}
	if c.Hidden <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.Vocab <= 0 || c.KVLora <= 0 || c.Nope <= 0 || c.Rope <= 0 || c.V <= 0 {
		return nil, fmt.Errorf("config.json needs positive hidden_size, num_hidden_layers, num_attention_heads, vocab_size, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim")
	}
	c.Eps = positive(c.Eps, 1e-6)
	c.RopeTheta = positive(c.RopeTheta, 10000)
	c.Freq = positive(c.Freq, 1)
	c.Scale = positive(c.Scale, 1)
	if c.HiddenAct != "" && c.HiddenAct != "silu" {
		return nil, fmt.Errorf("hidden_act %q is not supported (only silu)", c.HiddenAct)
	}
	if err := nn.CheckRopeScaling(c.RopeScaling); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	if glm {
		if err := c.checkGLM(); err != nil {
			return nil, err
		}
	} else if c.Scoring != "" && c.Scoring != "softmax" {
		return nil, fmt.Errorf("scoring_func %q is not supported (only softmax)", c.Scoring)
	}
	switch c.TopKMethod {
	case "", "greedy":
	case "group_limited_greedy", "noaux_tc":
		if c.TopKMethod == "noaux_tc" && !glm {
			return nil, fmt.Errorf("topk_method %q is not supported (greedy)", c.TopKMethod)
		}
		if c.NGroup > 1 && c.TopKGroup < c.NGroup {
			return nil, fmt.Errorf("topk_method %q with n_group %d, topk_group %d is not supported", c.TopKMethod, c.NGroup, c.TopKGroup)
		}
	default:
		return nil, fmt.Errorf("topk_method %q is not supported (greedy)", c.TopKMethod)
	}
	if c.Routed > 0 {
		if c.MoEInter <= 0 || c.TopK <= 0 || c.TopK > c.Routed {
			return nil, fmt.Errorf("num_experts_per_tok %d must be between 1 and n_routed_experts %d, with a positive moe_intermediate_size", c.TopK, c.Routed)
		}
	}
	if c.FirstDense < c.Layers && c.Inter <= 0 && c.FirstDense > 0 {
		return nil, fmt.Errorf("config.json needs a positive intermediate_size for the dense layers")
	}
	return &c, nil
}

// checkGLM checks what GLM-4.x MoE Lite's keys say: its router is
// DeepSeek-V3's (sigmoid), the whole qk_rope_head_dim rotates, and the
// dense layers are mlp_layer_types' or, as transformers defaults them,
// the first one only.
func (c *deepseekConfig) checkGLM() error {
	if c.Scoring != "" && c.Scoring != "sigmoid" {
		return fmt.Errorf("scoring_func %q is not supported (GLM's router is sigmoid)", c.Scoring)
	}
	if c.TopKMethod != "" && c.TopKMethod != "noaux_tc" {
		return fmt.Errorf("topk_method %q is not supported (GLM's router is noaux_tc)", c.TopKMethod)
	}
	// its router always limits the experts to topk_group of n_group
	// groups; only the case where that leaves every group is built
	if c.NGroup > 1 && c.TopKGroup < c.NGroup {
		return fmt.Errorf("n_group %d with topk_group %d is not supported (group-limited routing)", c.NGroup, c.TopKGroup)
	}
	if c.Partial != nil && *c.Partial != 1 {
		return fmt.Errorf("config.json: partial_rotary_factor %v is not supported (only 1)", *c.Partial)
	}
	if p := c.RopeParams; p != nil && p.PartialRotaryFactor != 0 && p.PartialRotaryFactor != 1 {
		return fmt.Errorf("config.json: rope_parameters.partial_rotary_factor %v is not supported (only 1)", p.PartialRotaryFactor)
	}
	if c.Freq != 1 {
		return fmt.Errorf("config.json: moe_layer_freq %d is not supported (GLM reads mlp_layer_types)", c.Freq)
	}
	if c.MLPTypes == nil {
		// transformers builds ["dense"] + ["sparse"] * (layers - 1) and
		// does not read first_k_dense_replace: another value would build
		// a model the checkpoint was not trained as
		if c.FirstDense != 0 && c.FirstDense != 1 {
			return fmt.Errorf("config.json: first_k_dense_replace %d without mlp_layer_types is not supported (transformers makes only the first layer dense)", c.FirstDense)
		}
		c.FirstDense = 1
		return nil
	}
	return checkLayerTypes("mlp_layer_types", c.MLPTypes, c.Layers, "dense", "sparse")
}

// sparse reports whether layer i is a mixture of experts.
func (c *deepseekConfig) sparse(i int) bool {
	if c.MLPTypes != nil {
		return c.Routed > 0 && c.MLPTypes[i] == "sparse"
	}
	return c.Routed > 0 && i >= c.FirstDense && i%c.Freq == 0
}

type deepseek struct {
	llama    // embedding, norm, head and Info; its layers stay empty
	dsLayers []*deepseekLayer
}

type deepseekLayer struct {
	attnNorm, mlpNorm *nn.RMSNorm
	attn              *mla
	mlp               block
}

// mla is multi-head latent attention in the absorbed form.
type mla struct {
	q, qA, qB      nn.Layer // q when q_lora_rank is null, else qA then qB
	qANorm, kvNorm *nn.RMSNorm
	kvA            nn.Layer
	wUK, wUV       *mlx.Array // kv_b split per head: [H, nope, kvLora], [H, v, kvLora]
	o              nn.Layer
	rope           *nn.RoPE
	heads          int
	nope, rot, v   int
	kvLora         int
	scale          float32
}

func newDeepseek(raw map[string]any, w *nn.Weights, glm bool) (Model, error) {
	c, err := deepseekConfigOf(raw, glm)
	if err != nil {
		return nil, err
	}
	// DeepSeek's rope dimensions are interleaved pairs; GLM says so with
	// rope_interleave (true unless set)
	interleaved := c.RopeInterleave == nil || *c.RopeInterleave
	rope, err := nn.NewRoPE(c.Rope, c.RopeTheta, interleaved, c.RopeScaling, c.MaxPos)
	if err != nil {
		return nil, err
	}
	qd := c.Nope + c.Rope
	scale := 1 / math.Sqrt(float64(qd))
	if s := c.RopeScaling; s.Kind() == "yarn" && s.MScaleAllDim != 0 && s.Factor > 1 {
		// YaRN's attention temperature, squared as DeepSeek applies it to
		// the softmax scale (the rotation carries only the mscale ratio).
		m := 0.1*s.MScaleAllDim*math.Log(s.Factor) + 1
		scale *= m * m
	}
	m := &deepseek{}
	m.ropes = []*nn.RoPE{rope}
	m.embed = w.Embedding("model.embed_tokens", c.Vocab, c.Hidden)
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		a := &mla{
			kvA:    w.Linear(p+"self_attn.kv_a_proj_with_mqa", c.Hidden, c.KVLora+c.Rope, c.AttnBias),
			kvNorm: w.RMSNorm(p+"self_attn.kv_a_layernorm", c.KVLora, c.Eps, false),
			o:      w.Linear(p+"self_attn.o_proj", c.Heads*c.V, c.Hidden, c.AttnBias),
			rope:   rope, heads: c.Heads, nope: c.Nope, rot: c.Rope, v: c.V, kvLora: c.KVLora,
			scale: float32(scale),
		}
		if c.QLora == nil || *c.QLora == 0 {
			a.q = w.Linear(p+"self_attn.q_proj", c.Hidden, c.Heads*qd, false)
		} else {
			a.qA = w.Linear(p+"self_attn.q_a_proj", c.Hidden, *c.QLora, c.AttnBias)
			a.qANorm = w.RMSNorm(p+"self_attn.q_a_layernorm", *c.QLora, c.Eps, false)
			a.qB = w.Linear(p+"self_attn.q_b_proj", *c.QLora, c.Heads*qd, false)
		}
		if w.Has(p + "self_attn.embed_q.weight") {
			a.split(w, p+"self_attn.", c) // mlx-lm's glm4_moe_lite / deepseek_v3
		} else {
			a.absorb(w, p+"self_attn.kv_b_proj", c)
		}
		l := &deepseekLayer{
			attnNorm: w.RMSNorm(p+"input_layernorm", c.Hidden, c.Eps, false),
			mlpNorm:  w.RMSNorm(p+"post_attention_layernorm", c.Hidden, c.Eps, false),
			attn:     a,
		}
		if c.sparse(i) {
			moe := newSparseMoE(w, p+"mlp.", moeNames{router: "gate", gate: "gate_proj", up: "up_proj", down: "down_proj"},
				c.Hidden, c.MoEInter, c.Routed, c.TopK, c.NormTopK)
			moe.routedScale = c.Scale
			if glm {
				moe.sigmoid = true
				moe.scoreBias = w.Array(p+"mlp.gate.e_score_correction_bias", c.Routed)
			}
			if c.Shared > 0 {
				sh := loadGatedMLP(w, p+"mlp.shared_experts.", c.Hidden, c.MoEInter*c.Shared, false, mlx.SwiGLU)
				moe.shared = &sh
			}
			l.mlp = moe
		} else {
			mlp := newGatedMLP(w, p, c.Hidden, c.Inter, false, mlx.SwiGLU)
			l.mlp = &mlp
		}
		m.dsLayers = append(m.dsLayers, l)
	}
	lc := &llamaConfig{Hidden: c.Hidden, Layers: c.Layers, Vocab: c.Vocab, Eps: c.Eps, MaxPos: c.MaxPos, Tie: c.Tie, EOS: c.EOS}
	family := "deepseek_v2"
	if glm {
		family = "glm4_moe_lite"
		// the multi-token-prediction layers after the last one
		for i := 0; i < c.NextN; i++ {
			w.Ignore(fmt.Sprintf("model.layers.%d.", c.Layers+i))
		}
	}
	m.finish(w, lc, family)
	m.info.CacheBytesPerToken = int64(c.Layers) * int64(c.KVLora+c.Rope) * 4
	// without the latent cache: every head's K (nope+rope) and V
	m.info.GQACacheBytesPerToken = int64(c.Layers) * int64(c.Heads) * int64(c.Nope+c.Rope+c.V) * 4
	return m, nil
}

// absorb loads kv_b_proj ([H*(nope+v), kvLora]) as its per-head key and
// value halves, for the absorbed attention. A quantized kv_b is expanded:
// the absorbed products need it as a float matrix, and it is small.
func (a *mla) absorb(w *nn.Weights, path string, c *deepseekConfig) {
	full := w.FloatWeight(w.Linear(path, c.KVLora, c.Heads*(c.Nope+c.V), false))
	if full == nil {
		return // reported
	}
	hw := mlx.Reshape(full, c.Heads, c.Nope+c.V, c.KVLora)
	k, v := mlx.SliceAxis(hw, 1, 0, c.Nope), mlx.SliceAxis(hw, 1, c.Nope, c.Nope+c.V)
	uk, uv := mlx.Copy(k), mlx.Copy(v)
	mlx.Free(hw, k, v)
	a.wUK, a.wUV = w.Replace(full, uk), w.Adopt(uv) // the halves replace the whole
}

// split loads kv_b_proj as mlx-lm's conversion stores it, already split
// per head: embed_q [H, kvLora, nope] (the key half, transposed) and
// unembed_out [H, v, kvLora], each a float or MLX-quantized stack. They
// are expanded to float, as absorb expands a quantized kv_b.
func (a *mla) split(w *nn.Weights, p string, c *deepseekConfig) {
	uk := floatStack(w, p+"embed_q", c.Heads, c.Nope, c.KVLora)
	uv := floatStack(w, p+"unembed_out", c.Heads, c.KVLora, c.V)
	if uk == nil || uv == nil {
		return // reported
	}
	t := mlx.Transpose(uk, 0, 2, 1)
	a.wUK, a.wUV = w.Replace(uk, mlx.Copy(t)), uv
	t.Free()
}

// floatStack loads a stack of e [out, in] matrices at path (float or
// MLX-quantized) as one float [e, out, in] array the model owns, or nil
// when its tensors are missing (reported).
func floatStack(w *nn.Weights, path string, e, in, out int) *mlx.Array {
	m := w.StackedExperts(path, e, in, out)
	if m.W != nil || m.Q == nil {
		return m.W
	}
	d := mlx.Dequantize(m.Q, m.Scales, m.Biases, m.GroupSize, m.Bits)
	for _, q := range []*mlx.Array{m.Q, m.Scales, m.Biases} {
		if q != nil {
			w.Drop(q)
		}
	}
	return w.Adopt(d)
}

func (a *mla) forward(x *mlx.Array, c nn.Cache) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	b, l := x.Dim(0), x.Dim(1)
	var q *mlx.Array
	if a.q != nil {
		q = a.q.Forward(x)
	} else {
		q = a.qB.Forward(a.qANorm.Forward(a.qA.Forward(x)))
	}
	q = splitHeads(q, a.heads, a.nope+a.rot) // [B, H, L, nope+rope]
	qNope, qPe := mlx.SliceAxis(q, 3, 0, a.nope), mlx.SliceAxis(q, 3, a.nope, a.nope+a.rot)
	kv := a.kvA.Forward(x) // [B, L, kvLora+rope]
	latent := a.kvNorm.Forward(mlx.SliceAxis(kv, 2, 0, a.kvLora))
	kPe := mlx.SliceAxis(kv, 2, a.kvLora, a.kvLora+a.rot)
	off := c.Offset()
	qPe = a.rope.Forward(qPe, off)
	kPe = a.rope.Forward(mlx.Reshape(kPe, b, 1, l, a.rot), off)
	lat, pe := c.Update(mlx.Reshape(latent, b, 1, l, a.kvLora), kPe) // [B, 1, T, kvLora], [B, 1, T, rope]
	qq := mlx.Concatenate([]*mlx.Array{mlx.Matmul(qNope, a.wUK), qPe}, 3)
	kk := mlx.Concatenate([]*mlx.Array{lat, pe}, 3)
	ctx := mlx.ScaledDotProductAttention(qq, kk, lat, a.scale, mlx.CausalMask()) // [B, H, L, kvLora]
	return s.Keep(a.o.Forward(mergeHeads(mlx.MatmulT(ctx, a.wUV))))
}

func (m *deepseek) NewCaches() []nn.Cache {
	cs := make([]nn.Cache, len(m.dsLayers))
	for i := range cs {
		cs[i] = nn.NewLatentCache()
	}
	return cs
}

func (m *deepseek) Forward(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return forward(m, tokens, caches)
}

func (m *deepseek) Hidden(tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	return decode(m, func() *mlx.Array { return m.embed.Forward(tokens) }, m.dsLayers, caches, m.norm)
}

func (l *deepseekLayer) forward(x *mlx.Array, c nn.Cache) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	h := mlx.Add(x, l.attn.forward(l.attnNorm.Forward(x), c))
	return s.Keep(mlx.Add(h, l.mlp.forward(l.mlpNorm.Forward(h))))
}
