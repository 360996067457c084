// Package whisper is Whisper's encoder-decoder graph on hark/mlx, with its
// tokenizer specifics (special tokens, languages, non-speech tokens).
// Decoding strategies and the transcription loop live in
// hark/engine/transcribe.
package whisper

import (
	"fmt"

	"hark/mlx"
	"hark/mlx/safetensors"
	"hark/models/nn"
	"hark/models/profile"
)

func init() {
	profile.Register(profile.Family{
		Name:          "whisper",
		Architectures: []string{"WhisperForConditionalGeneration"},
		ModelTypes:    []string{"whisper"},
		Kind:          profile.KindSpeech,
		Check: func(c *profile.Config) error {
			// Re-parse the raw config with the graph's own rules so the
			// library's verdict and Load agree.
			raw, err := jsonOf(c.Raw)
			if err != nil {
				return err
			}
			_, err = ParseConfig(raw)
			return err
		},
	})
}

// Model is a loaded Whisper. It is an io.Closer: Close frees the weights.
// A Model is not safe for concurrent use (mlx scopes are process-wide), so
// run one transcription at a time per process.
type Model struct {
	Config *Config

	conv1W, conv1B *mlx.Array // [d, 3, n_mels] (MLX conv layout)
	conv2W, conv2B *mlx.Array // [d, 3, d]
	encPos         *mlx.Array // [n_audio_ctx, d]
	encBlocks      []*block
	encLN          *nn.LayerNorm

	tokens    *nn.Embedding // [n_vocab, d], tied output projection
	decPos    *mlx.Array    // [n_text_ctx, d]
	decBlocks []*block
	decLN     *nn.LayerNorm

	owned []*mlx.Array // every weight, freed by Close
}

type attention struct {
	query, key, value, out nn.Layer
	heads                  int
}

// block is a pre-LN residual block: self-attention, then (decoder only)
// cross-attention over the audio, then a GELU MLP.
type block struct {
	attn       *attention
	attnLN     *nn.LayerNorm
	cross      *attention
	crossLN    *nn.LayerNorm
	mlp1, mlp2 nn.Layer
	mlpLN      *nn.LayerNorm
}

// Load reads a Whisper model folder: config.json, optional
// generation_config.json, and HF or mlx-community safetensors. Load
// outside any mlx scope: the weights would otherwise belong to it.
func Load(dir string) (*Model, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	src, err := openWeights(dir)
	if err != nil {
		return nil, fmt.Errorf("whisper: %w", err)
	}
	defer src.Close()
	if cfg.AlignmentHeads == nil {
		if cfg.AlignmentHeads, err = alignmentHeadsTensor(src); err != nil {
			return nil, fmt.Errorf("whisper: %s: %w", dir, err)
		}
	}
	m, err := FromSource(cfg, src)
	if err != nil {
		return nil, fmt.Errorf("whisper: %s: %w", dir, err)
	}
	return m, nil
}

// FromSource builds the model from an open checkpoint in any of the
// supported naming schemes. The arrays are copies, so src may be closed
// afterwards.
func FromSource(cfg *Config, src safetensors.Source) (*Model, error) {
	cs, err := newCanonicalSource(src)
	if err != nil {
		return nil, err
	}
	w := nn.NewWeights(cs, cfg.Quant)
	m := &Model{Config: cfg}
	d, eps := cfg.AudioState, float64(cfg.LayerNormEps)
	m.conv1W, m.conv1B = conv(w, "encoder.conv1", cfg.NMels, d)
	m.conv2W, m.conv2B = conv(w, "encoder.conv2", d, d)
	// mlx-community checkpoints recompute the sinusoids instead of storing them.
	m.encPos = w.Optional("encoder.positional_embedding", cfg.AudioCtx, d)
	for i := 0; i < cfg.AudioLayer; i++ {
		m.encBlocks = append(m.encBlocks, newBlock(w, fmt.Sprintf("encoder.blocks.%d", i), d, cfg.AudioHead, false, eps))
	}
	m.encLN = w.LayerNorm("encoder.ln_post", d, eps)
	m.tokens = w.Embedding("decoder.token_embedding", cfg.Vocab, d)
	m.decPos = w.Array("decoder.positional_embedding", cfg.TextCtx, d)
	for i := 0; i < cfg.TextLayer; i++ {
		m.decBlocks = append(m.decBlocks, newBlock(w, fmt.Sprintf("decoder.blocks.%d", i), d, cfg.TextHead, true, eps))
	}
	m.decLN = w.LayerNorm("decoder.ln", d, eps)
	m.owned = w.Loaded()
	if err := w.Err(); err != nil {
		m.Close()
		return nil, err
	}
	if m.encPos == nil {
		m.encPos = mlx.FromSlice(Sinusoids(cfg.AudioCtx, d), cfg.AudioCtx, d)
		m.owned = append(m.owned, m.encPos)
	}
	return m, nil
}

func newAttention(w *nn.Weights, prefix string, d, heads int) *attention {
	return &attention{
		query: w.Linear(prefix+".query", d, d, true),
		key:   w.Linear(prefix+".key", d, d, false),
		value: w.Linear(prefix+".value", d, d, true),
		out:   w.Linear(prefix+".out", d, d, true),
		heads: heads,
	}
}

func newBlock(w *nn.Weights, prefix string, d, heads int, cross bool, eps float64) *block {
	b := &block{
		attn:   newAttention(w, prefix+".attn", d, heads),
		attnLN: w.LayerNorm(prefix+".attn_ln", d, eps),
		mlp1:   w.Linear(prefix+".mlp1", d, 4*d, true),
		mlp2:   w.Linear(prefix+".mlp2", 4*d, d, true),
		mlpLN:  w.LayerNorm(prefix+".mlp_ln", d, eps),
	}
	if cross {
		b.cross = newAttention(w, prefix+".cross_attn", d, heads)
		b.crossLN = w.LayerNorm(prefix+".cross_attn_ln", d, eps)
	}
	return b
}

// Close frees the weights. It is idempotent.
func (m *Model) Close() error {
	mlx.Free(m.owned...)
	m.owned = nil
	return nil
}
