// Package whisper is Whisper's encoder-decoder graph on hark/mlx, with its
// tokenizer specifics (special tokens, languages, non-speech tokens).
// Decoding strategies and the transcription loop live in
// hark/engine/transcribe.
package whisper

import (
	"fmt"

	"hark/mlx"
	"hark/mlx/safetensors"
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
	encLN          *layerNorm

	tokens    *embedding // [n_vocab, d], tied output projection
	decPos    *mlx.Array // [n_text_ctx, d]
	decBlocks []*block
	decLN     *layerNorm
}

type attention struct {
	query, key, value, out *linear
	heads                  int
}

// block is a pre-LN residual block: self-attention, then (decoder only)
// cross-attention over the audio, then a GELU MLP.
type block struct {
	attn       *attention
	attnLN     *layerNorm
	cross      *attention
	crossLN    *layerNorm
	mlp1, mlp2 *linear
	mlpLN      *layerNorm
}

// Load reads a Whisper model folder: config.json, optional
// generation_config.json, and HF or mlx-community safetensors.
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
	m, err := FromSource(cfg, src)
	if err != nil {
		return nil, fmt.Errorf("whisper: %s: %w", dir, err)
	}
	if m.Config.AlignmentHeads == nil {
		heads, err := alignmentHeadsTensor(src)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("whisper: %s: %w", dir, err)
		}
		m.Config.AlignmentHeads = heads
	}
	return m, nil
}

// FromSource builds the model from an open checkpoint. The arrays are
// copies, so src may be closed afterwards.
func FromSource(cfg *Config, src safetensors.Source) (_ *Model, err error) {
	m := &Model{Config: cfg}
	defer func() {
		if err != nil {
			m.Close() // frees whatever was loaded before the failure
		}
	}()
	// Arrays made while loading belong to any mlx scope the caller has
	// open: load outside scopes.
	w := newWeights(src, cfg.Quant)
	d := cfg.AudioState
	eps := cfg.LayerNormEps
	if m.conv1W, m.conv1B, err = w.conv("encoder.conv1", cfg.NMels, d); err != nil {
		return nil, err
	}
	if m.conv2W, m.conv2B, err = w.conv("encoder.conv2", d, d); err != nil {
		return nil, err
	}
	if w.has("encoder.positional_embedding") {
		if m.encPos, err = w.dense("encoder.positional_embedding", cfg.AudioCtx, d); err != nil {
			return nil, err
		}
	} else {
		// mlx-community checkpoints recompute the sinusoids instead of
		// storing them.
		m.encPos = mlx.FromSlice(Sinusoids(cfg.AudioCtx, d), cfg.AudioCtx, d)
	}
	for i := 0; i < cfg.AudioLayer; i++ {
		b, err := w.block(fmt.Sprintf("encoder.blocks.%d", i), d, cfg.AudioHead, false, eps)
		if err != nil {
			return nil, err
		}
		m.encBlocks = append(m.encBlocks, b)
	}
	if m.encLN, err = w.layerNorm("encoder.ln_post", d, eps); err != nil {
		return nil, err
	}
	tok, err := w.linear("decoder.token_embedding", d, cfg.Vocab, false)
	if err != nil {
		return nil, err
	}
	m.tokens = &embedding{*tok}
	if m.decPos, err = w.dense("decoder.positional_embedding", cfg.TextCtx, d); err != nil {
		return nil, err
	}
	for i := 0; i < cfg.TextLayer; i++ {
		b, err := w.block(fmt.Sprintf("decoder.blocks.%d", i), d, cfg.TextHead, true, eps)
		if err != nil {
			return nil, err
		}
		m.decBlocks = append(m.decBlocks, b)
	}
	if m.decLN, err = w.layerNorm("decoder.ln", d, eps); err != nil {
		return nil, err
	}
	return m, nil
}

func (w *weights) attention(prefix string, d, heads int) (a *attention, err error) {
	a = &attention{heads: heads}
	for _, p := range []struct {
		dst  **linear
		name string
		bias bool
	}{{&a.query, "query", true}, {&a.key, "key", false}, {&a.value, "value", true}, {&a.out, "out", true}} {
		if *p.dst, err = w.linear(prefix+"."+p.name, d, d, p.bias); err != nil {
			a.free()
			return nil, err
		}
	}
	return a, nil
}

func (a *attention) free() {
	if a != nil {
		a.query.free()
		a.key.free()
		a.value.free()
		a.out.free()
	}
}

func (w *weights) block(prefix string, d, heads int, cross bool, eps float32) (_ *block, err error) {
	b := &block{}
	defer func() {
		if err != nil {
			b.free()
		}
	}()
	if b.attn, err = w.attention(prefix+".attn", d, heads); err != nil {
		return nil, err
	}
	if b.attnLN, err = w.layerNorm(prefix+".attn_ln", d, eps); err != nil {
		return nil, err
	}
	if cross {
		if b.cross, err = w.attention(prefix+".cross_attn", d, heads); err != nil {
			return nil, err
		}
		if b.crossLN, err = w.layerNorm(prefix+".cross_attn_ln", d, eps); err != nil {
			return nil, err
		}
	}
	if b.mlp1, err = w.linear(prefix+".mlp1", d, 4*d, true); err != nil {
		return nil, err
	}
	if b.mlp2, err = w.linear(prefix+".mlp2", 4*d, d, true); err != nil {
		return nil, err
	}
	b.mlpLN, err = w.layerNorm(prefix+".mlp_ln", d, eps)
	return b, err
}

func (b *block) free() {
	if b == nil {
		return
	}
	b.attn.free()
	b.attnLN.free()
	b.cross.free()
	b.crossLN.free()
	b.mlp1.free()
	b.mlp2.free()
	b.mlpLN.free()
}

// Close frees the weights. It is idempotent.
func (m *Model) Close() error {
	mlx.Free(m.conv1W, m.conv1B, m.conv2W, m.conv2B, m.encPos, m.decPos)
	for _, b := range m.encBlocks {
		b.free()
	}
	for _, b := range m.decBlocks {
		b.free()
	}
	m.encBlocks, m.decBlocks = nil, nil
	m.encLN.free()
	m.decLN.free()
	if m.tokens != nil {
		m.tokens.free()
	}
	return nil
}
