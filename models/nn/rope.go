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
	// PartialRotaryFactor is read by "proportional" RoPE (Gemma 4's full
	// layers) only: the share of the head's pairs that rotate.
	PartialRotaryFactor float64 `json:"partial_rotary_factor"`
	// Key is where the config holds this object ("rope_scaling",
	// "text_config.rope_parameters.full_attention"), for errors; empty
	// means rope_scaling.
	Key string `json:"-"`
}

// At records where the config holds s, for the errors that name it, and
// returns s (nil stays nil).
func (s *RopeScaling) At(key string) *RopeScaling {
	if s != nil {
		s.Key = key
	}
	return s
}

// field names the key of s's type (or of field, when not empty) as the
// config spells it: rope_scaling.rope_type, rope_scaling.type, ...
func (s *RopeScaling) field(name string) string {
	where := "rope_scaling"
	if s != nil && s.Key != "" {
		where = s.Key
	}
	if name == "" {
		name = "rope_type"
		if s != nil && s.Type == "" && s.LegacyType != "" {
			name = "type"
		}
	}
	return where + "." + name
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
// model is refused at load time instead of drifting at long context. Its
// errors name the key and the value (rope_scaling.rope_type "dynamic").
func CheckRopeScaling(s *RopeScaling) error {
	switch k := s.Kind(); k {
	case "default", "linear", "llama3", "yarn":
		if k != "default" && s.Factor <= 0 {
			return fmt.Errorf("%s %s needs a positive %s", s.field(""), k, s.field("factor"))
		}
		return nil
	case "longrope", "su":
		if len(s.LongFactor) == 0 {
			return fmt.Errorf("%s %s needs %s", s.field(""), k, s.field("long_factor"))
		}
		return nil
	case "proportional":
		if p := s.PartialRotaryFactor; p < 0 || p > 1 || s.Factor < 0 {
			return fmt.Errorf("%s proportional needs %s in (0, 1] and a positive factor, not %v and %v", s.field(""), s.field("partial_rotary_factor"), p, s.Factor)
		}
		return nil
	default:
		return fmt.Errorf("%s %q is not supported (supported: default, linear, llama3, yarn, longrope, proportional)", s.field(""), k)
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
	case "proportional":
		r.freqs = proportionalFreqs(dims, base, s)
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

// proportionalFreqs is Gemma 4's "proportional" RoPE as transformers
// defines it: over the whole head (dims), the first
// floor(partial_rotary_factor * dims / 2) pairs turn at
// base^(-2i/dims) / factor radians per position (the exponent's
// denominator is the whole head, not the rotated part), and the other
// pairs do not turn. Pairs are split-half over the whole head, (i,
// i+dims/2), so this is not a RoPE over a prefix of the features: the
// still pairs get an infinite wavelength, which every backend's RoPE turns
// into the identity (1/Inf = 0 radians).
func proportionalFreqs(dims int, base float64, s *RopeScaling) *mlx.Array {
	p := s.PartialRotaryFactor
	if p == 0 {
		p = 1
	}
	factor := s.Factor
	if factor == 0 {
		factor = 1
	}
	turning := int(math.Floor(p * float64(dims) / 2))
	f := make([]float32, dims/2)
	for i := range f {
		f[i] = float32(math.Inf(1))
		if i < turning {
			f[i] = float32(factor * math.Pow(base, float64(2*i)/float64(dims)))
		}
	}
	return mlx.FromSlice(f)
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

// ForwardFor rotates x [B, H, L, D] at the positions cache c is at: each
// row at its own offset when c serves a batch of sequences
// (RowPositions), else all at c.Offset().
func (r *RoPE) ForwardFor(x *mlx.Array, c Cache) *mlx.Array {
	rp, ok := c.(RowPositions)
	if !ok {
		return r.Forward(x, c.Offset())
	}
	offs := rp.RowOffsets()
	if x.Dim(0) != len(offs) {
		panic(fmt.Sprintf("nn: RoPE over %d rows for a batch of %d", x.Dim(0), len(offs)))
	}
	s := mlx.NewScope()
	defer s.Close()
	rows := make([]*mlx.Array, len(offs))
	for i, o := range offs {
		rows[i] = r.Forward(mlx.SliceAxis(x, 0, i, i+1), o)
	}
	return s.Keep(mlx.Concatenate(rows, 0))
}
