package llm

import (
	"fmt"
	"slices"

	"hark/models/nn"
)

// qwen35Config is the text config of Qwen3.5 and Qwen3.5-MoE (nested
// under text_config in the release, or flat).
type qwen35Config struct {
	Hidden       int             `json:"hidden_size"`
	Layers       int             `json:"num_hidden_layers"`
	Intermediate int             `json:"intermediate_size"`
	Heads        int             `json:"num_attention_heads"`
	KVHeads      int             `json:"num_key_value_heads"`
	HeadDim      int             `json:"head_dim"`
	Vocab        int             `json:"vocab_size"`
	Eps          float64         `json:"rms_norm_eps"`
	RopeTheta    float64         `json:"rope_theta"`
	RopeParams   *qwen35Rope     `json:"rope_parameters"`
	RopeScaling  *nn.RopeScaling `json:"rope_scaling"`
	Partial      float64         `json:"partial_rotary_factor"`
	MaxPos       int             `json:"max_position_embeddings"`
	Tie          *bool           `json:"tie_word_embeddings"`
	AttnBias     bool            `json:"attention_bias"`
	HiddenAct    string          `json:"hidden_act"`
	EOS          IDList          `json:"eos_token_id"`
	OutputGate   *bool           `json:"attn_output_gate"`
	FullInterval int             `json:"full_attention_interval"`
	LayerTypes   []string        `json:"layer_types"`
	ConvKernel   int             `json:"linear_conv_kernel_dim"`
	LinKDim      int             `json:"linear_key_head_dim"`
	LinVDim      int             `json:"linear_value_head_dim"`
	LinKHeads    int             `json:"linear_num_key_heads"`
	LinVHeads    int             `json:"linear_num_value_heads"`
	MLPOnly      []int           `json:"mlp_only_layers"`
	SSMDType     string          `json:"mamba_ssm_dtype"`
	// MoE (qwen3_5_moe)
	Experts     int   `json:"num_experts"`
	TopK        int   `json:"num_experts_per_tok"`
	MoEInter    int   `json:"moe_intermediate_size"`
	SharedInter int   `json:"shared_expert_intermediate_size"`
	NormTopK    *bool `json:"norm_topk_prob"`
	SparseStep  int   `json:"decoder_sparse_step"`
	linear      []bool
	rotaryDims  int
	ropeScaling *nn.RopeScaling
	// at is where the text config sits ("text_config." in the release
	// layout), so errors name keys as the file spells them.
	at           string
	topLevelTie  *bool
	topLevelEOS  IDList
	isMoE        bool
	normTopKProb bool
}

// qwen35Rope is rope_parameters: a rope_scaling object plus Qwen's
// multimodal rotary layout, which text-only positions make plain RoPE
// (all three position streams are the token index).
type qwen35Rope struct {
	nn.RopeScaling
	Partial          float64 `json:"partial_rotary_factor"`
	MropeSection     []int   `json:"mrope_section"`
	MropeInterleaved bool    `json:"mrope_interleaved"`
}

var qwen35Keys = []string{
	"hidden_size", "num_hidden_layers", "intermediate_size", "num_attention_heads", "num_key_value_heads",
	"head_dim", "vocab_size", "rms_norm_eps", "rope_theta", "rope_parameters", "rope_scaling", "partial_rotary_factor",
	"max_position_embeddings", "attention_bias", "hidden_act", "attn_output_gate", "full_attention_interval",
	"layer_types", "linear_conv_kernel_dim", "linear_key_head_dim", "linear_value_head_dim", "linear_num_key_heads",
	"linear_num_value_heads", "mlp_only_layers", "mtp_num_hidden_layers", "mtp_use_dedicated_embeddings", "mamba_ssm_dtype",
}

var qwen35MoEKeys = []string{
	"num_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
	"norm_topk_prob", "decoder_sparse_step",
}

// qwen35TopKeys are the keys of the multimodal wrapper around text_config;
// the vision tower they describe is not loaded.
var qwen35TopKeys = []string{
	"text_config", "vision_config", "image_token_id", "video_token_id", "vision_start_token_id",
	"vision_end_token_id", "vision_token_id", "language_model_only",
}

// qwen35ConfigOf reads and checks the config; moe says which family is
// asking, since the MoE keys mean nothing to the dense one.
func qwen35ConfigOf(raw map[string]any, moe bool) (*qwen35Config, error) {
	text := raw
	c := &qwen35Config{isMoE: moe}
	if tc, ok := raw["text_config"].(map[string]any); ok {
		if err := checkKeys(raw, qwen35TopKeys...); err != nil {
			return nil, err
		}
		var top struct {
			Tie *bool  `json:"tie_word_embeddings"`
			EOS IDList `json:"eos_token_id"`
		}
		if err := decodeConfig(raw, &top); err != nil {
			return nil, err
		}
		c.topLevelTie, c.topLevelEOS = top.Tie, top.EOS
		text = tc
		c.at = "text_config."
	}
	known := qwen35Keys
	if moe {
		known = append(append([]string(nil), qwen35Keys...), qwen35MoEKeys...)
	}
	if err := checkKeys(text, known...); err != nil {
		return nil, err
	}
	if err := decodeConfig(text, c); err != nil {
		return nil, err
	}
	return c, c.check()
}

// maxQwen35Layers bounds num_hidden_layers, which sizes per-layer tables
// before any weight is read (the largest release has 64 layers).
const maxQwen35Layers = 1 << 12

func (c *qwen35Config) check() error {
	if c.Hidden <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.Vocab <= 0 {
		return fmt.Errorf("config.json needs positive hidden_size, num_hidden_layers, num_attention_heads and vocab_size")
	}
	if c.Layers > maxQwen35Layers {
		return fmt.Errorf("num_hidden_layers %d is more than %d", c.Layers, maxQwen35Layers)
	}
	c.KVHeads = positive(c.KVHeads, c.Heads)
	c.HeadDim = positive(c.HeadDim, c.Hidden/c.Heads)
	c.Eps = positive(c.Eps, 1e-6)
	c.ConvKernel = positive(c.ConvKernel, 4)
	if c.ConvKernel < 1 || c.KVHeads < 0 || c.HeadDim < 0 {
		return fmt.Errorf("linear_conv_kernel_dim %d, num_key_value_heads %d and head_dim %d must be positive", c.ConvKernel, c.KVHeads, c.HeadDim)
	}
	if c.Heads%c.KVHeads != 0 {
		return fmt.Errorf("num_attention_heads %d is not a multiple of num_key_value_heads %d", c.Heads, c.KVHeads)
	}
	if c.HiddenAct != "" && c.HiddenAct != "silu" {
		return fmt.Errorf("hidden_act %q is not supported (only silu)", c.HiddenAct)
	}
	if c.LinKHeads <= 0 || c.LinVHeads <= 0 || c.LinKDim <= 0 || c.LinVDim <= 0 || c.LinVHeads%c.LinKHeads != 0 {
		return fmt.Errorf("linear attention needs positive linear_num_key_heads, linear_num_value_heads (a multiple of the key heads), linear_key_head_dim and linear_value_head_dim; got %d, %d, %d, %d",
			c.LinKHeads, c.LinVHeads, c.LinKDim, c.LinVDim)
	}
	switch c.SSMDType {
	case "", "float32", "bfloat16", "float16":
		// The recurrent state is kept in float32 whatever the checkpoint
		// trained it in: at least as precise.
	default:
		return fmt.Errorf("mamba_ssm_dtype %q is not a float dtype", c.SSMDType)
	}
	if err := c.layerKinds(); err != nil {
		return err
	}
	if err := c.rope(); err != nil {
		return err
	}
	if c.isMoE {
		if c.Experts <= 0 || c.MoEInter <= 0 {
			return fmt.Errorf("config.json needs positive num_experts and moe_intermediate_size")
		}
		if c.TopK <= 0 || c.TopK > c.Experts {
			return fmt.Errorf("num_experts_per_tok %d must be between 1 and num_experts %d", c.TopK, c.Experts)
		}
		c.SparseStep = positive(c.SparseStep, 1)
		c.normTopKProb = c.NormTopK == nil || *c.NormTopK
	}
	for i := 0; i < c.Layers; i++ {
		if !c.sparse(i) && c.Intermediate <= 0 {
			return fmt.Errorf("layer %d has a dense MLP but intermediate_size is %d", i, c.Intermediate)
		}
	}
	return nil
}

// layerKinds sets which layers are linear attention: from layer_types,
// or every full_attention_interval-th layer full (the older spelling).
func (c *qwen35Config) layerKinds() error {
	c.linear = make([]bool, c.Layers)
	if c.LayerTypes != nil {
		if len(c.LayerTypes) != c.Layers {
			return fmt.Errorf("layer_types has %d entries for %d layers", len(c.LayerTypes), c.Layers)
		}
		for i, t := range c.LayerTypes {
			switch t {
			case "linear_attention":
				c.linear[i] = true
			case "full_attention":
			default:
				return fmt.Errorf("%slayer_types[%d] %q is not a layer type this graph has (linear_attention, full_attention)", c.at, i, t)
			}
		}
		return nil
	}
	if c.FullInterval <= 0 {
		return fmt.Errorf("config.json needs layer_types or a positive full_attention_interval")
	}
	for i := range c.linear {
		c.linear[i] = (i+1)%c.FullInterval != 0
	}
	return nil
}

// rope reads rope_parameters (or rope_theta / rope_scaling): the rotated
// part of each head and the scaling, which must be one nn.RoPE knows.
func (c *qwen35Config) rope() error {
	partial := c.Partial
	// rope_scaling is the older spelling; a config carrying both is read
	// from rope_parameters, but an unknown rope_scaling is still refused.
	if c.RopeParams != nil && c.RopeScaling != nil {
		if err := nn.CheckRopeScaling(c.RopeScaling.At(c.at + "rope_scaling")); err != nil {
			return err
		}
	}
	if p := c.RopeParams; p != nil {
		sc := p.RopeScaling
		if sc.Kind() == "mrope" {
			sc.Type, sc.LegacyType = "default", ""
		}
		c.ropeScaling = sc.At(c.at + "rope_parameters")
		c.RopeTheta = positive(p.RopeTheta, c.RopeTheta)
		if p.Partial != 0 {
			partial = p.Partial
		}
		if len(p.MropeSection) > 0 {
			sum := 0
			for _, s := range p.MropeSection {
				sum += s
			}
			if rot := int(float64(c.HeadDim) * positive(partial, 1)); 2*sum != rot {
				return fmt.Errorf("rope_parameters.mrope_section %v covers %d rotary dims, partial_rotary_factor gives %d", p.MropeSection, 2*sum, rot)
			}
		}
	} else {
		c.ropeScaling = c.RopeScaling.At(c.at + "rope_scaling")
	}
	c.RopeTheta = positive(c.RopeTheta, 10000)
	partial = positive(partial, 1)
	c.rotaryDims = int(float64(c.HeadDim) * partial)
	if partial <= 0 || partial > 1 || c.rotaryDims <= 0 || c.rotaryDims%2 != 0 {
		return fmt.Errorf("partial_rotary_factor %v gives %d rotary dims of head_dim %d", partial, c.rotaryDims, c.HeadDim)
	}
	return nn.CheckRopeScaling(c.ropeScaling)
}

// sparse reports whether layer i's feed-forward is a mixture of experts.
func (c *qwen35Config) sparse(i int) bool {
	return c.isMoE && !slices.Contains(c.MLPOnly, i) && (i+1)%c.SparseStep == 0
}

func (c *qwen35Config) tied() *bool {
	if c.Tie != nil {
		return c.Tie
	}
	return c.topLevelTie
}

func (c *qwen35Config) eos() IDList {
	if len(c.EOS) > 0 {
		return c.EOS
	}
	return c.topLevelEOS
}
