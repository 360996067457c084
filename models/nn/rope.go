package nn

import (
	"fmt"
	"math"

	"hark/mlx"
)

// RopeScaling is a config's rope_scaling object (also transformers v5's
// rope_parameters). Type is rope_type or, in older configs, type.
type RopeScaling struct {
	Type            string   `json:"rope_type"`
	LegacyType      string   `json:"type"`
	Factor          float64  `json:"factor"`
	LowFreqFactor   float64  `json:"low_freq_factor"`
	HighFreqFactor  float64  `json:"high_freq_factor"`
	OriginalMaxPos  int      `json:"original_max_position_embeddings"`
	BetaFast        float64  `json:"beta_fast"`
	BetaSlow        float64  `json:"beta_slow"`
	MScale          float64  `json:"mscale"`
	MScaleAllDim    float64  `json:"mscale_all_dim"`
	AttentionFactor *float64 `json:"attention_factor"`
	RopeTheta       float64  `json:"rope_theta"` // rope_parameters carries the base too
	// Truncate false keeps YaRN's correction range fractional (GPT-OSS);
	// absent or true rounds it outward, as most configs and llama.cpp do.
	Truncate *bool `json:"truncate"`
	// longrope (Phi-3.5, Phi-4-mini): per-pair wavelength multipliers.
	ShortFactor []float64 `json:"short_factor"`
	LongFactor  []float64 `json:"long_factor"`
	LongMScale  float64   `json:"long_mscale"`
}

// Kind is the scaling type with the legacy spelling folded in.
func (s *RopeScaling) Kind() string {
	if s == nil {
		return "default"
	}
	t := s.Type
	if t == "" {
		t = s.LegacyType
	}
	if t == "" {
		t = "default"
	}
	return t
}

// CheckRopeScaling rejects scaling types Hark does not implement, so a
// model is refused at load time instead of drifting at long context.
func CheckRopeScaling(s *RopeScaling) error {
	switch k := s.Kind(); k {
	case "default", "linear", "llama3", "yarn":
		if k != "default" && s.Factor <= 0 {
			return fmt.Errorf("rope_scaling %s needs a positive factor", k)
		}
		return nil
	case "longrope", "su":
		if len(s.LongFactor) == 0 {
			return fmt.Errorf("rope_scaling %s needs long_factor", k)
		}
		return nil
	default:
		return fmt.Errorf("rope_scaling type %q is not supported (supported: linear, llama3, yarn, longrope)", k)
	}
}

// RoPE rotates query/key features by position.
type RoPE struct {
	params mlx.RoPEParams // Offset set per call
	freqs  *mlx.Array
}

// NewRoPE builds rotary embeddings over the first dims features of each
// head with the given base, MLX's traditional (interleaved) or split-half
// layout, and optional scaling. maxPos is max_position_embeddings, the
// fallback for original_max_position_embeddings.
func NewRoPE(dims int, base float64, traditional bool, s *RopeScaling, maxPos int) (*RoPE, error) {
	if err := CheckRopeScaling(s); err != nil {
		return nil, err
	}
	if dims <= 0 || dims%2 != 0 {
		return nil, fmt.Errorf("rotary dims %d must be positive and even", dims)
	}
	if base <= 0 {
		return nil, fmt.Errorf("rope_theta %v must be positive", base)
	}
	r := &RoPE{params: mlx.RoPEParams{Dims: dims, Traditional: traditional, Base: float32(base)}}
	orig := maxPos
	if s != nil && s.OriginalMaxPos > 0 {
		orig = s.OriginalMaxPos
	}
	switch s.Kind() {
	case "linear":
		r.params.Scale = float32(1 / s.Factor)
	case "llama3":
		if orig <= 0 || s.LowFreqFactor <= 0 || s.HighFreqFactor <= s.LowFreqFactor {
			return nil, fmt.Errorf("rope_scaling llama3 needs original_max_position_embeddings and low_freq_factor < high_freq_factor")
		}
		r.freqs = mlx.Llama3RoPEFreqs(dims, base, s.Factor, s.LowFreqFactor, s.HighFreqFactor, orig)
	case "yarn":
		if orig <= 0 {
			return nil, fmt.Errorf("rope_scaling yarn needs original_max_position_embeddings")
		}
		bf, bs := s.BetaFast, s.BetaSlow
		if bf == 0 {
			bf = 32
		}
		if bs == 0 {
			bs = 1
		}
		if s.Truncate != nil && !*s.Truncate {
			r.freqs = mlx.YarnRoPEFreqsUntruncated(dims, base, s.Factor, orig, bf, bs)
		} else {
			r.freqs = mlx.YarnRoPEFreqs(dims, base, s.Factor, orig, bf, bs)
		}
		ms := s.MScale
		if ms == 0 {
			ms = 1
		}
		m := mlx.YarnMScale(s.Factor, ms, s.MScaleAllDim)
		if s.AttentionFactor != nil {
			m = *s.AttentionFactor
		}
		r.params.MScale = float32(m)
	case "longrope", "su":
		if err := r.longrope(dims, base, s, orig, maxPos); err != nil {
			return nil, err
		}
	}
	r.params.Freqs = r.freqs
	return r, nil
}

// longrope sets Phi-3's "LongRoPE" scaling the way mlx-lm runs it: the
// long factors stretch each pair's wavelength at every length (transformers
// switches to short_factor below original_max_position_embeddings, which
// would invalidate a KV cache when a conversation crosses that length), and
// the rotated features are scaled by sqrt(1 + ln(max/orig) / ln(orig)).
func (r *RoPE) longrope(dims int, base float64, s *RopeScaling, orig, maxPos int) error {
	if len(s.LongFactor) != dims/2 {
		return fmt.Errorf("rope_scaling long_factor has %d entries, want %d (rotary dims / 2)", len(s.LongFactor), dims/2)
	}
	if orig <= 0 || maxPos <= 0 {
		return fmt.Errorf("rope_scaling longrope needs max_position_embeddings and original_max_position_embeddings")
	}
	f := make([]float32, dims/2)
	for i := range f {
		f[i] = float32(s.LongFactor[i] * math.Pow(base, float64(2*i)/float64(dims)))
	}
	r.freqs = mlx.FromSlice(f)
	m := 1.0
	if ratio := float64(maxPos) / float64(orig); ratio > 1 {
		m = math.Sqrt(1 + math.Log(ratio)/math.Log(float64(orig)))
	}
	if s.LongMScale > 0 {
		m = s.LongMScale
	}
	if s.AttentionFactor != nil {
		m = *s.AttentionFactor
	}
	r.params.MScale = float32(m)
	return nil
}

// Forward rotates x [B, H, L, D] whose first row sits at position offset.
func (r *RoPE) Forward(x *mlx.Array, offset int) *mlx.Array {
	p := r.params
	p.Offset = offset
	return mlx.RoPE(x, p)
}

// Params is the rotation as mlx.RoPEParams (Offset zero): for ops that
// rotate inside, such as mlx.DecodeAttention.
func (r *RoPE) Params() mlx.RoPEParams { return r.params }

// Close frees the precomputed frequencies.
func (r *RoPE) Close() {
	if r.freqs != nil {
		r.freqs.Free()
		r.freqs = nil
	}
}
