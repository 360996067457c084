// Package engine runs Hark's local language models: it loads a model
// directory (graph, weights, tokenizer, chat template, generation config),
// refuses models that would not fit in memory, and generates text with
// chunked prefill, a prefix cache across turns, sampling, stop handling and
// streaming; optionally with the KV cache quantized (kvquant.go) and
// speculative decoding with rollback (speculative.go, drafters.go).
// Concurrent generations decode together in one batch and share a prefix
// trie of token blocks (GenerateBatched: batch.go, prefixtrie.go).
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"hark/mlx"
	"hark/mlx/safetensors"
	"hark/models/chattemplate"
	"hark/models/llm"
	"hark/models/nn"
	"hark/models/profile"
	"hark/models/tokenizer"
)

// Engine is one loaded model ready to generate. Generate calls are
// serialised (the engine owns a single KV cache for them); GenerateBatched
// calls run together, one batch step at a time between them.
type Engine struct {
	Dir       string
	Model     llm.Model
	Tokenizer *tokenizer.Tokenizer
	// Template is the chat template, nil for a base model (prompt it raw).
	Template *chattemplate.Template
	// EOS are the ids that end generation: generation_config.json's,
	// config.json's and the tokenizer's, merged.
	EOS []int
	// Defaults are generation_config.json's sampling settings.
	Defaults Sampling
	Memory   MemoryEstimate
	// KV is how generations keep the KV cache unless they choose
	// (Options.KVBits): LoadOptions.KV.
	KV nn.KVQuant

	mu       sync.Mutex
	caches   []nn.Cache
	cached   []int      // tokens whose keys and values are in caches
	cacheKV  nn.KVQuant // how caches store them
	counters Counters
	// prefillRate is the last prefill speed measured (tokens/s), which
	// sizes the next prefill's chunks (prefillchunk.go).
	prefillRate float64
	batch       batcher     // generations decoding together (batch.go)
	batchOK     bool        // the model can decode in a batch
	prefix      *prefixTrie // shared by the batched generations (prefixtrie.go)
}

// Counters are totals over the engine's life, for tests and diagnostics.
type Counters struct {
	Requests        int
	PrefilledTokens int // prompt tokens run through the model
	ReusedTokens    int // prompt tokens served from the prefix cache
	GeneratedTokens int
}

// LoadOptions tune Load.
type LoadOptions struct {
	// SkipMemoryCheck loads even when the estimate exceeds available memory.
	SkipMemoryCheck bool
	// KV is how generations keep the KV cache unless they choose (zero:
	// DefaultKV; nn.KVFloat32Bits: float32), which the memory estimate
	// assumes.
	KV nn.KVQuant
	// PrefixCacheBytes bounds the prefix cache batched generations share
	// (0: DefaultPrefixCacheBytes; < 0: none).
	PrefixCacheBytes int64
}

// Load opens the model in dir.
func Load(dir string, opt LoadOptions) (*Engine, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("load %s: the folder has no config.json, so it is not a model Hark can load (a download that has not finished?)", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	cfg, err := profile.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	if res := profile.Resolve(cfg); !res.Supported {
		return nil, fmt.Errorf("load %s: unsupported model: %s", dir, res.Reason)
	} else if res.Kind != profile.KindChat {
		return nil, fmt.Errorf("load %s: a %s model, not a language model", dir, res.Kind)
	}
	set, err := safetensors.OpenIndex(dir)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	defer set.Close()
	if err := opt.KV.Validate(); err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	est, err := estimateMemory(set, cfg, 0)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	opt.KV = ResolveKV(opt.KV)
	est = est.withKV(opt.KV)
	est.Available = deviceAvailable()
	if !opt.SkipMemoryCheck {
		if err := checkFits(est); err != nil {
			return nil, fmt.Errorf("load %s: %w", dir, err)
		}
	}
	// Every tensor is about to be read: on a cold page cache the file then
	// streams in once, ahead of the loader. Not for weights that would
	// crowd the cache (a large mixture of experts maps its experts).
	if est.Available == 0 || 2*est.Weights < est.Available {
		set.Prefetch()
	}
	// The tokenizer, chat template, generation config and the NaN scan
	// are read while the weights load: on two cores they overlap the
	// packing instead of adding to the time until the model is ready.
	aux := make(chan error, 1)
	var (
		tok *tokenizer.Tokenizer
		tpl *chattemplate.Template
		gen *generationConfig
	)
	go func() {
		var err error
		tok, tpl, gen, err = loadText(dir, set)
		aux <- err
	}()
	m, err := llm.New(cfg, nn.NewWeights(set, cfg.Quant))
	if auxErr := <-aux; auxErr != nil {
		if err == nil {
			m.Close()
		}
		return nil, fmt.Errorf("load %s: %w", dir, auxErr)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	e := &Engine{Dir: dir, Model: m, Tokenizer: tok, Template: tpl, Memory: est, Defaults: gen.sampling(), KV: opt.KV}
	if err := e.checkKV(opt.KV); err != nil {
		m.Close()
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	e.initPrefix(opt.PrefixCacheBytes)
	e.initBatch()
	e.EOS = mergeIDs(gen.EOS, m.Info().EOS)
	if id := tok.EOS(); id >= 0 {
		e.EOS = mergeIDs(e.EOS, []int{id})
	}
	return e, nil
}

// Close frees the model and its cache.
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	nn.FreeCaches(e.caches)
	e.caches, e.cached = nil, nil
	e.prefix.clear()
	if e.Model != nil {
		e.Model.Close()
		e.Model = nil
		mlx.ReleaseDeviceMemory()
	}
}

// Counters returns the totals so far.
func (e *Engine) Counters() Counters {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.counters
}

// ResetCache forgets the cached conversation and the shared prefixes.
func (e *Engine) ResetCache() {
	e.mu.Lock()
	defer e.mu.Unlock()
	nn.FreeCaches(e.caches)
	e.caches, e.cached = nil, nil
	e.prefix.clear()
}

type generationConfig struct {
	EOS         llm.IDList `json:"eos_token_id"`
	DoSample    *bool      `json:"do_sample"`
	Temperature *float64   `json:"temperature"`
	TopK        int        `json:"top_k"`
	TopP        float64    `json:"top_p"`
	MinP        float64    `json:"min_p"`
	RepPenalty  float64    `json:"repetition_penalty"`
}

func readGenerationConfig(dir string) (*generationConfig, error) {
	g := &generationConfig{}
	data, err := os.ReadFile(filepath.Join(dir, "generation_config.json"))
	if errors.Is(err, os.ErrNotExist) {
		return g, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, g); err != nil {
		return nil, fmt.Errorf("generation_config.json: %w", err)
	}
	return g, nil
}

// sampling turns the generation config into default sampling settings;
// do_sample false means greedy, as in transformers.
func (g *generationConfig) sampling() Sampling {
	s := Sampling{Temperature: 0.7, TopP: g.TopP, TopK: g.TopK, MinP: g.MinP, RepetitionPenalty: g.RepPenalty}
	if g.Temperature != nil {
		s.Temperature = *g.Temperature
	}
	if g.DoSample != nil && !*g.DoSample {
		s.Temperature = 0
	}
	return s
}

func mergeIDs(a, b []int) []int {
	out := append([]int(nil), a...)
	for _, id := range b {
		dup := false
		for _, x := range out {
			dup = dup || x == id
		}
		if !dup {
			out = append(out, id)
		}
	}
	return out
}

// RawPrompt tokenizes text as a plain completion prompt with the special
// tokens the tokenizer's post-processor adds, as HF's
// encode(text, add_special_tokens=True) does: a BOS only where the
// tokenizer adds one (Phi-3 names a bos_token but adds none). An empty text
// is BOS alone when the tokenizer has one, so that there is something to
// continue from.
func (e *Engine) RawPrompt(text string) []int {
	ids := e.Tokenizer.Encode(text, true)
	if bos := e.Tokenizer.BOS(); len(ids) == 0 && bos >= 0 {
		ids = []int{bos}
	}
	return ids
}

// ChatPrompt renders messages with the chat template, ready for the
// assistant's reply, and tokenizes the result. The template writes any BOS
// itself, so no special tokens are added (as transformers does).
// Cancelling ctx stops both the template (which the model supplies, so it
// may loop for ever) and the tokenizer.
func (e *Engine) ChatPrompt(ctx context.Context, msgs []chattemplate.Message, extra map[string]any) ([]int, error) {
	if e.Template == nil {
		return nil, errors.New("this model has no chat template (a base model): prompt it raw")
	}
	text, err := e.Template.RenderContext(ctx, chattemplate.Input{Messages: msgs, AddGenerationPrompt: true, Extra: extra})
	if err != nil {
		return nil, err
	}
	return e.Tokenizer.EncodeContext(ctx, text, false)
}
