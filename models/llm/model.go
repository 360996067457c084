// Package llm holds Hark's causal language model graphs, one short file per
// architecture, each registering itself under its Hugging Face
// architectures / model_type names both here (to build it) and with
// package profile (so the library can tell which models run).
package llm

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"hark/mlx"
	"hark/models/nn"
	"hark/models/profile"
)

// Model is a loaded causal LM.
type Model interface {
	// Forward maps token ids [B, L] (int32) to logits [B, L, vocab],
	// reading and extending caches (one per layer, from NewCaches). nil
	// caches means a fresh, throw-away context.
	Forward(tokens *mlx.Array, caches []nn.Cache) *mlx.Array
	// Hidden is Forward without the output head: final-normed hidden
	// states [B, L, hidden]. Prefill uses it to run the head on the last
	// position only.
	Hidden(tokens *mlx.Array, caches []nn.Cache) *mlx.Array
	// Logits applies the output head (and any final soft-capping) to
	// hidden states [..., hidden].
	Logits(h *mlx.Array) *mlx.Array
	// NewCaches returns empty per-layer caches of the right kinds.
	NewCaches() []nn.Cache
	Info() Info
	// Close frees the weights.
	Close()
}

// Info describes a loaded model.
type Info struct {
	Family      string
	VocabSize   int
	Layers      int
	HiddenSize  int
	MaxContext  int   // max_position_embeddings (0 if unknown)
	EOS         []int // eos_token_id from config.json
	WeightBytes int64 // memory held by the weights
	PackedBytes int64 // of those, in the backend's packed decode layout
	// MappedBytes are the weights (MoE experts) left mapped from their
	// files: resident only once a token has used them.
	MappedBytes int64
	// CacheBytesPerToken is what one more position of context adds to the
	// caches (float32), over all layers: 2*kv_heads*head_dim floats a
	// layer for K and V, the latent vector alone for DeepSeek's MLA.
	CacheBytesPerToken int64
	// GQACacheBytesPerToken is what a cache of the attention's full K and
	// V heads (a GQA cache) would add per position instead; it is set
	// only where the model caches less, as MLA's latent cache does.
	GQACacheBytesPerToken int64
}

// Constructor builds a model from its config, claiming its tensors from w.
type Constructor func(cfg *profile.Config, w *nn.Weights) (Model, error)

// Arch is one architecture: the profile family it answers for and how to
// build it.
type Arch struct {
	Family profile.Family
	New    Constructor
}

var (
	archMu sync.RWMutex
	arches []Arch
)

// Register adds an architecture here and its family to package profile.
// Called from init in each architecture's file.
func Register(a Arch) {
	if a.Family.Kind == "" {
		a.Family.Kind = profile.KindChat
	}
	profile.Register(a.Family)
	archMu.Lock()
	arches = append(arches, a)
	archMu.Unlock()
}

// Families lists the registered family names, sorted.
func Families() []string {
	archMu.RLock()
	defer archMu.RUnlock()
	var out []string
	for _, a := range arches {
		out = append(out, a.Family.Name)
	}
	sort.Strings(out)
	return out
}

// New builds the model for cfg, choosing the architecture as
// profile.Resolve does (architectures first, then model_type, then
// text_config.model_type). The weights must all be claimed: leftovers or
// gaps are an error listing them.
func New(cfg *profile.Config, w *nn.Weights) (Model, error) {
	res := profile.Resolve(cfg)
	if !res.Supported {
		return nil, fmt.Errorf("unsupported model: %s", res.Reason)
	}
	archMu.RLock()
	var arch *Arch
	for i := range arches {
		if arches[i].Family.Name == res.Family {
			arch = &arches[i]
		}
	}
	archMu.RUnlock()
	if arch == nil {
		return nil, fmt.Errorf("model family %q has no graph in package llm", res.Family)
	}
	m, err := arch.New(cfg, w)
	if err != nil {
		w.Discard()
		return nil, fmt.Errorf("%s: %w", res.Family, err)
	}
	if err := w.Err(); err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: %w", res.Family, err)
	}
	return m, nil
}

func freeAll(xs []*mlx.Array) {
	for _, x := range xs {
		x.Free()
	}
}

// decodeConfig fills dst (a struct with json tags) from the config object m
// (cfg.Raw or a nested text_config).
func decodeConfig(m map[string]any, dst any) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("config.json: %w", err)
	}
	var size struct {
		Layers float64 `json:"num_hidden_layers"`
	}
	if json.Unmarshal(raw, &size) == nil && size.Layers > maxLayers {
		return fmt.Errorf("config.json: num_hidden_layers %v is over the %d a model can have here", size.Layers, maxLayers)
	}
	return nil
}

// maxLayers bounds num_hidden_layers (real models have at most a few
// hundred): the families' checks loop over layers when the library scans a
// config.json, and a hostile one must not make that scan spin.
const maxLayers = 4096

// IDList is a token id field that configs write as a number or a list.
type IDList []int

// UnmarshalJSON accepts 2, [2, 3] or null.
func (l *IDList) UnmarshalJSON(b []byte) error {
	var one *int
	if err := json.Unmarshal(b, &one); err == nil {
		*l = nil
		if one != nil {
			*l = IDList{*one}
		}
		return nil
	}
	var many []int
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("token id must be an integer or a list of integers: %s", b)
	}
	*l = many
	return nil
}

// base carries what every graph shares: its info, owned weights and the
// output head.
type base struct {
	info    Info
	weights []*mlx.Array
	ropes   []*nn.RoPE
}

func (b *base) Info() Info { return b.info }

func (b *base) Close() {
	freeAll(b.weights)
	b.weights = nil
	for _, r := range b.ropes {
		r.Close()
	}
	b.ropes = nil
}

// forward runs hidden then head; the graphs share it.
func forward(m Model, tokens *mlx.Array, caches []nn.Cache) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	return s.Keep(m.Logits(m.Hidden(tokens, caches)))
}

// splitHeads turns [B, L, H*D] into [B, H, L, D].
func splitHeads(x *mlx.Array, h, d int) *mlx.Array {
	return mlx.Transpose(mlx.Reshape(x, x.Dim(0), x.Dim(1), h, d), 0, 2, 1, 3)
}

// mergeHeads turns [B, H, L, D] into [B, L, H*D].
func mergeHeads(x *mlx.Array) *mlx.Array {
	t := mlx.Transpose(x, 0, 2, 1, 3)
	return mlx.Reshape(t, t.Dim(0), t.Dim(1), -1)
}

// checkCaches returns caches, or fresh ones when nil.
func checkCaches(m Model, caches []nn.Cache) []nn.Cache {
	if caches == nil {
		return m.NewCaches()
	}
	if len(caches) != m.Info().Layers {
		panic(fmt.Sprintf("llm: %d caches for %d layers", len(caches), m.Info().Layers))
	}
	return caches
}

// decoderLayer is one decoder layer: x plus what it adds, reading its cache.
type decoderLayer interface {
	forward(x *mlx.Array, c nn.Cache) *mlx.Array
}

// decode runs the embedded tokens (embed, called inside the scope) through
// every layer with its cache, then the final norm: the part of Hidden that
// every family shares.
func decode[B decoderLayer](m Model, embed func() *mlx.Array, layers []B, caches []nn.Cache, norm *nn.RMSNorm) *mlx.Array {
	caches = checkCaches(m, caches)
	s := mlx.NewScope()
	defer s.Close()
	h := embed()
	for i, l := range layers {
		next := s.Keep(l.forward(h, caches[i]))
		if next != h {
			// The last hidden state is dead once the layer has read it:
			// held to the end, every layer's would add up (24 × 1.8 MB
			// for a 512-token chunk of a 0.5B model).
			s.FreeOwned(h)
		}
		h = next
	}
	return s.Keep(norm.Forward(h))
}

// positive returns v, or def when v is zero.
func positive[T int | float64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}
