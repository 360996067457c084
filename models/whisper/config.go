package whisper

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"hark/models/profile"
)

// Dims are a Whisper model's hyper-parameters, in OpenAI's ModelDimensions
// terms. Both Hugging Face (d_model, encoder_layers...) and OpenAI/MLX
// (n_audio_state, n_text_layer...) config.json files map onto them.
type Dims struct {
	NMels      int
	AudioCtx   int // encoder positions (1500)
	AudioState int
	AudioHead  int
	AudioLayer int
	Vocab      int
	TextCtx    int // decoder positions (448)
	TextState  int
	TextHead   int
	TextLayer  int
}

// Multilingual reports whether the vocabulary has language tokens beyond
// English (OpenAI: n_vocab >= 51865).
func (d Dims) Multilingual() bool { return d.Vocab >= 51865 }

// NumLanguages is how many language tokens the vocabulary holds (99, or 100
// for large-v3), computed as OpenAI does from the vocabulary size.
func (d Dims) NumLanguages() int {
	n := d.Vocab - 51765
	if d.Multilingual() {
		n--
	}
	return n
}

func (d Dims) validate() error {
	switch {
	case d.NMels <= 0, d.AudioCtx <= 0, d.AudioState <= 0, d.AudioHead <= 0, d.AudioLayer <= 0,
		d.Vocab <= 0, d.TextCtx <= 0, d.TextState <= 0, d.TextHead <= 0, d.TextLayer <= 0:
		return fmt.Errorf("incomplete dimensions %+v", d)
	case d.AudioState%d.AudioHead != 0 || d.TextState%d.TextHead != 0:
		return fmt.Errorf("state size not divisible by heads: %+v", d)
	case d.AudioState != d.TextState:
		return fmt.Errorf("encoder width %d differs from decoder width %d", d.AudioState, d.TextState)
	case d.NumLanguages() < 0 || d.NumLanguages() > len(Languages):
		return fmt.Errorf("vocabulary of %d tokens does not match any Whisper tokenizer", d.Vocab)
	}
	return nil
}

// Config is what the graph reads from a model folder.
type Config struct {
	Dims
	// Quant is the MLX quantization of config.json (nil for float
	// checkpoints), as hark/models/profile reads it.
	Quant *profile.Quant
	// AlignmentHeads are the [layer, head] cross-attention heads used for
	// word timestamps (generation_config.json); nil when not given.
	AlignmentHeads [][2]int
	// LayerNormEps is 1e-5 for every released Whisper.
	LayerNormEps float32
}

type rawConfig struct {
	// Hugging Face names
	NumMelBins         int    `json:"num_mel_bins"`
	DModel             int    `json:"d_model"`
	EncoderLayers      int    `json:"encoder_layers"`
	DecoderLayers      int    `json:"decoder_layers"`
	EncoderHeads       int    `json:"encoder_attention_heads"`
	DecoderHeads       int    `json:"decoder_attention_heads"`
	MaxSourcePositions int    `json:"max_source_positions"`
	MaxTargetPositions int    `json:"max_target_positions"`
	VocabSize          int    `json:"vocab_size"`
	EncoderFFN         int    `json:"encoder_ffn_dim"`
	DecoderFFN         int    `json:"decoder_ffn_dim"`
	Activation         string `json:"activation_function"`
	ScaleEmbedding     bool   `json:"scale_embedding"`
	// OpenAI / MLX names
	NMels       int `json:"n_mels"`
	NAudioCtx   int `json:"n_audio_ctx"`
	NAudioState int `json:"n_audio_state"`
	NAudioHead  int `json:"n_audio_head"`
	NAudioLayer int `json:"n_audio_layer"`
	NVocab      int `json:"n_vocab"`
	NTextCtx    int `json:"n_text_ctx"`
	NTextState  int `json:"n_text_state"`
	NTextHead   int `json:"n_text_head"`
	NTextLayer  int `json:"n_text_layer"`
}

// ParseConfig reads config.json bytes in either naming scheme.
func ParseConfig(data []byte) (*Config, error) {
	var r rawConfig
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	c := &Config{LayerNormEps: 1e-5}
	if r.DModel > 0 {
		c.Dims = Dims{
			NMels: r.NumMelBins, AudioCtx: r.MaxSourcePositions, AudioState: r.DModel,
			AudioHead: r.EncoderHeads, AudioLayer: r.EncoderLayers, Vocab: r.VocabSize,
			TextCtx: r.MaxTargetPositions, TextState: r.DModel, TextHead: r.DecoderHeads, TextLayer: r.DecoderLayers,
		}
		// OpenAI's architecture is fixed; refuse HF variants it cannot express
		// instead of computing something else silently.
		if r.Activation != "" && r.Activation != "gelu" {
			return nil, fmt.Errorf("config.json: activation %q is not supported (Whisper uses gelu)", r.Activation)
		}
		if r.ScaleEmbedding {
			return nil, errors.New("config.json: scale_embedding=true is not supported")
		}
		for _, ffn := range []int{r.EncoderFFN, r.DecoderFFN} {
			if ffn != 0 && ffn != 4*r.DModel {
				return nil, fmt.Errorf("config.json: ffn width %d is not 4*d_model", ffn)
			}
		}
	} else {
		c.Dims = Dims{
			NMels: r.NMels, AudioCtx: r.NAudioCtx, AudioState: r.NAudioState, AudioHead: r.NAudioHead,
			AudioLayer: r.NAudioLayer, Vocab: r.NVocab, TextCtx: r.NTextCtx, TextState: r.NTextState,
			TextHead: r.NTextHead, TextLayer: r.NTextLayer,
		}
	}
	if err := c.Dims.validate(); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	pc, err := profile.Parse(data)
	if err != nil {
		return nil, err
	}
	if q := pc.Quant; q != nil {
		if q.Method != "" || (q.Mode != "" && q.Mode != "affine") {
			return nil, fmt.Errorf("config.json: quantization %q is not supported (only MLX affine)", q.Method+q.Mode)
		}
		c.Quant = q
	}
	return c, nil
}

// LoadConfig reads dir/config.json and, when present, the alignment heads of
// dir/generation_config.json.
func LoadConfig(dir string) (*Config, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("whisper: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("whisper: %s: %w", dir, err)
	}
	gen, err := LoadGenerationConfig(dir)
	if err != nil {
		return nil, err
	}
	if gen != nil {
		// Word timing indexes the decoder's attention with these: a head
		// outside it would crash a transcription long after loading.
		for _, h := range gen.AlignmentHeads {
			if h[0] < 0 || h[0] >= c.TextLayer || h[1] < 0 || h[1] >= c.TextHead {
				return nil, fmt.Errorf("whisper: %s: generation_config.json: alignment head %v is outside the decoder's %d layers × %d heads", dir, h, c.TextLayer, c.TextHead)
			}
		}
		c.AlignmentHeads = gen.AlignmentHeads
	}
	return c, nil
}

// GenerationConfig is the part of HF's generation_config.json Hark uses.
type GenerationConfig struct {
	AlignmentHeads [][2]int       `json:"alignment_heads"`
	LangToID       map[string]int `json:"lang_to_id"`
	TaskToID       map[string]int `json:"task_to_id"`
	NoTimestampsID int            `json:"no_timestamps_token_id"`
}

// LoadGenerationConfig reads dir/generation_config.json; a missing file
// gives nil, nil.
func LoadGenerationConfig(dir string) (*GenerationConfig, error) {
	p := filepath.Join(dir, "generation_config.json")
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("whisper: %w", err)
	}
	var g GenerationConfig
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("whisper: %s: %w", p, err)
	}
	return &g, nil
}
