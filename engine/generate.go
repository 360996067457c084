package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"hark/mlx"
	"hark/models/nn"
)

// Options configure one generation.
type Options struct {
	Sampling
	// MaxTokens caps the generated tokens (0: until EOS or the context is
	// full).
	MaxTokens int `json:"max_tokens,omitempty"`
	// Stop strings end generation; neither they nor any part of them is
	// ever returned.
	Stop []string `json:"stop,omitempty"`
	// PrefillChunk is how many prompt tokens go through the model at once
	// (0: 512), bounding the activations' memory on long prompts.
	PrefillChunk int `json:"prefill_chunk,omitempty"`
	// KVBits and KVGroup choose the KV cache (kvquant.go): 4 or 8 bits
	// quantized, 16 IEEE f16, nn.KVFloat32Bits float32; zero for both:
	// the engine's default (Engine.KV).
	KVBits  int `json:"kv_bits,omitempty"`
	KVGroup int `json:"kv_group,omitempty"`
	// Draft turns on speculative decoding (speculative.go): a drafter
	// proposes DraftTokens tokens (0: its default; at most MaxDraftTokens)
	// that the model checks in one forward pass.
	Draft       Drafter `json:"-"`
	DraftTokens int     `json:"draft_tokens,omitempty"`
	// Constraint, when set, limits the reply to a formal language
	// (structured output); it is single-use.
	Constraint Constraint `json:"-"`
	// Logprobs reports each generated token's log probability in
	// Result.Logprobs, with the TopLogprobs most likely alternatives.
	Logprobs    bool `json:"logprobs,omitempty"`
	TopLogprobs int  `json:"top_logprobs,omitempty"`
	// OnToken, if set, is called after each generated token with the
	// count so far (live speed while streaming), on the generating
	// goroutine, before the token's text reaches onText.
	OnToken func(generated int) `json:"-"`
	// OnLogprob, when set, is called with each generated token's log
	// probability as it is chosen (a stream's logprobs); it implies
	// Logprobs.
	OnLogprob func(TokenLogprob) `json:"-"`
}

// Finish reasons.
const (
	FinishStop      = "stop"      // EOS or a stop string
	FinishLength    = "length"    // MaxTokens or the context window
	FinishCancelled = "cancelled" // the context was cancelled
)

// Stats describe one generation.
type Stats struct {
	PromptTokens     int           `json:"prompt_tokens"`
	ReusedTokens     int           `json:"reused_tokens"`    // served by the prefix cache
	PrefilledTokens  int           `json:"prefilled_tokens"` // run through the model
	GeneratedTokens  int           `json:"generated_tokens"`
	TimeToFirstToken time.Duration `json:"time_to_first_token_ns"`
	PrefillTime      time.Duration `json:"prefill_ns"`
	DecodeTime       time.Duration `json:"decode_ns"`
	// PromptTPS is prefilled tokens per second of prefill.
	PromptTPS float64 `json:"prompt_tokens_per_second"`
	// GenerationTPS is tokens per second after the first one (whose time
	// is the prefill's).
	GenerationTPS float64 `json:"generation_tokens_per_second"`
	// KVCacheBytes is the memory the KV cache holds at the end, and
	// KVBits how it stores values (0: float32; 16: f16; 4 or 8 quantized).
	KVCacheBytes int64 `json:"kv_cache_bytes"`
	KVBits       int   `json:"kv_bits,omitempty"`
	// KVBytesPerToken is what one position adds to the model's float32
	// caches, and KVBytesPerTokenGQA what a cache of full K and V heads
	// would add instead, where the model caches less (MLA's latent cache).
	KVBytesPerToken    int64 `json:"kv_cache_bytes_per_token,omitempty"`
	KVBytesPerTokenGQA int64 `json:"kv_cache_bytes_per_token_gqa,omitempty"`
	// Speculative decoding: tokens drafted, and of those accepted.
	Drafted        int     `json:"drafted_tokens,omitempty"`
	Accepted       int     `json:"accepted_tokens,omitempty"`
	AcceptanceRate float64 `json:"acceptance_rate,omitempty"`
}

// Result is a finished generation.
type Result struct {
	Text         string `json:"text"`
	Tokens       []int  `json:"tokens"`
	FinishReason string `json:"finish_reason"`
	Stats        Stats  `json:"stats"`
	// Logprobs has one entry per token when Options.Logprobs is set.
	Logprobs []TokenLogprob `json:"logprobs,omitempty"`
}

// Generate continues prompt (token ids) and calls onText, if not nil, with
// each piece of text as soon as it is safe to show: complete UTF-8, not
// part of a possible stop string. An error from onText stops generation
// and is returned. Cancelling ctx ends generation with FinishCancelled and
// no error. onText runs with the engine locked (generations are
// serialised), so it must not call back into the engine; and, as mlx
// scopes are process-wide, no other goroutine should run mlx code while a
// generation is in progress.
func (e *Engine) Generate(ctx context.Context, prompt []int, opt Options, onText func(string) error) (*Result, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if err := validateLogprobs(&opt); err != nil {
		return nil, err
	}
	// The speculative loop checks drafts against the model's own choice;
	// it neither masks them nor records probabilities, so rather than
	// ignore either request it refuses the pair.
	if opt.Draft != nil && (opt.Constraint != nil || opt.Logprobs) {
		return nil, errors.New("generate: speculative decoding (a drafter) does not combine with structured output or logprobs yet; turn one of them off")
	}
	if len(prompt) == 0 {
		return nil, errors.New("generate: empty prompt (a raw prompt needs at least BOS)")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.Model == nil {
		return nil, errors.New("generate: engine is closed")
	}
	if err := e.useKV(e.kvFor(opt)); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	info := e.Model.Info()
	for _, id := range prompt {
		if id < 0 || id >= info.VocabSize {
			return nil, fmt.Errorf("generate: prompt token %d outside the vocabulary (%d)", id, info.VocabSize)
		}
	}
	if info.MaxContext > 0 && len(prompt) >= info.MaxContext {
		return nil, fmt.Errorf("generate: prompt of %d tokens fills the %d-token context", len(prompt), info.MaxContext)
	}
	g := &generation{e: e, opt: opt, onText: onText, start: time.Now()}
	res, err := g.run(ctx, prompt)
	e.counters.Requests++
	if res != nil {
		e.counters.PrefilledTokens += res.Stats.PrefilledTokens
		e.counters.ReusedTokens += res.Stats.ReusedTokens
		e.counters.GeneratedTokens += res.Stats.GeneratedTokens
	}
	return res, err
}

type generation struct {
	e      *Engine
	opt    Options
	onText func(string) error
	start  time.Time
	logits []float32 // host copy of the last logits, reused every step
	lp     logprobStep
}

// reuse trims the cache to the longest prefix it shares with prompt, keeping
// at least one prompt token to run (its logits start the reply), and
// returns how many prompt tokens are already cached.
func (e *Engine) reuse(prompt []int) int {
	if e.caches == nil {
		e.caches, e.cached = nn.QuantizeCaches(e.Model.NewCaches(), e.cacheKV), nil
	}
	n := 0
	for n < len(e.cached) && n < len(prompt)-1 && e.cached[n] == prompt[n] {
		n++
	}
	drop := len(e.cached) - n
	if drop > 0 {
		for _, c := range e.caches {
			if !c.Trim(drop) {
				// A cache that cannot roll back (a sliding window that
				// dropped the positions) forces a fresh start.
				for _, c := range e.caches {
					c.Reset()
				}
				e.cached = nil
				return 0
			}
		}
	}
	e.cached = e.cached[:n]
	return n
}

func (g *generation) run(ctx context.Context, prompt []int) (res *Result, err error) {
	e := g.e
	defer func() {
		// A panic inside the graph leaves the cache in an unknown state.
		if r := recover(); r != nil {
			e.caches, e.cached = nil, nil
			err = fmt.Errorf("generate: %v", r)
		}
	}()
	res = &Result{}
	st := &res.Stats
	st.PromptTokens = len(prompt)
	st.ReusedTokens = e.reuse(prompt)
	chunks := e.prefillChunks(g.opt.PrefillChunk)
	todo := prompt[st.ReusedTokens:]
	var logits []float32
	for len(todo) > 0 {
		if ctx.Err() != nil {
			res.FinishReason = FinishCancelled
			return res, nil
		}
		n := min(chunks.next(), len(todo))
		t0 := time.Now()
		logits = g.step(todo[:n], n == len(todo))
		chunks.took(n, time.Since(t0))
		todo = todo[n:]
		st.PrefilledTokens += n
	}
	if st.PrefilledTokens > 0 {
		releasePrefillScratch()
	}
	st.PrefillTime = time.Since(g.start)
	if st.PrefillTime > 0 {
		st.PromptTPS = float64(st.PrefilledTokens) / st.PrefillTime.Seconds()
	}

	maxCtx := e.Model.Info().MaxContext
	smp := newSampler(g.opt.Sampling)
	stream := e.Tokenizer.NewStream()
	stream.SkipSpecial = true
	stop := newStopper(g.opt.Stop)
	history := append([]int(nil), prompt...)
	var text []byte
	emit := func(s string) error {
		if s == "" {
			return nil
		}
		text = append(text, s...)
		if g.onText != nil {
			return g.onText(s)
		}
		return nil
	}
	var firstAt time.Time
	if g.opt.Draft != nil {
		return g.speculate(ctx, res, logits, history, smp, stream, stop, emit)
	}
	for {
		if err := g.checkLogits(logits, len(res.Tokens)); err != nil {
			// The cache holds the same garbage: drop it.
			nn.FreeCaches(e.caches)
			e.caches, e.cached = nil, nil
			return g.finish(res, firstAt, text), err
		}
		if g.opt.Constraint != nil {
			done, err := g.constrain(logits, len(res.Tokens))
			if err != nil {
				return g.finish(res, firstAt, text), err
			}
			if done {
				res.FinishReason = FinishStop
				break
			}
		}
		if g.opt.Logprobs {
			g.prepareLogprobs(logits)
		}
		tok := smp.sample(logits, history)
		if firstAt.IsZero() {
			firstAt = time.Now()
			st.TimeToFirstToken = firstAt.Sub(g.start)
		}
		if e.isEOS(tok) {
			res.FinishReason = FinishStop
			break
		}
		if g.opt.Constraint != nil {
			if err := g.opt.Constraint.Advance(tok); err != nil {
				return g.finish(res, firstAt, text), fmt.Errorf("generate: structured output: %w", err)
			}
		}
		if g.opt.Logprobs {
			g.recordLogprob(res, tok)
		}
		res.Tokens = append(res.Tokens, tok)
		if g.opt.OnToken != nil {
			g.opt.OnToken(len(res.Tokens))
		}
		history = append(history, tok)
		smp.observe(tok)
		out, stopped := stop.add(stream.Add(tok))
		if err := emit(out); err != nil {
			return g.finish(res, firstAt, text), err
		}
		if stopped || (g.opt.Constraint != nil && g.opt.Constraint.Final()) {
			res.FinishReason = FinishStop
			break
		}
		if g.opt.MaxTokens > 0 && len(res.Tokens) >= g.opt.MaxTokens {
			res.FinishReason = FinishLength
			break
		}
		if maxCtx > 0 && len(e.cached)+1 >= maxCtx {
			res.FinishReason = FinishLength
			break
		}
		if ctx.Err() != nil {
			res.FinishReason = FinishCancelled
			break
		}
		logits = g.step([]int{tok}, true)
	}
	if !stop.hit {
		if out, _ := stop.add(stream.Flush()); out != "" {
			if err := emit(out); err != nil {
				return g.finish(res, firstAt, text), err
			}
		}
		if err := emit(stop.flush()); err != nil {
			return g.finish(res, firstAt, text), err
		}
	}
	return g.finish(res, firstAt, text), nil
}

func (g *generation) finish(res *Result, firstAt time.Time, text []byte) *Result {
	st := &res.Stats
	res.Text = string(text)
	st.GeneratedTokens = len(res.Tokens)
	st.KVCacheBytes, st.KVBits = nn.CacheBytes(g.e.caches), g.e.cacheKV.Bits
	info := g.e.Model.Info()
	st.KVBytesPerToken, st.KVBytesPerTokenGQA = info.CacheBytesPerToken, info.GQACacheBytesPerToken
	if st.Drafted > 0 {
		st.AcceptanceRate = float64(st.Accepted) / float64(st.Drafted)
	}
	if !firstAt.IsZero() {
		st.DecodeTime = time.Since(firstAt)
		if n := st.GeneratedTokens - 1; n > 0 && st.DecodeTime > 0 {
			st.GenerationTPS = float64(n) / st.DecodeTime.Seconds()
		}
	}
	return res
}

func (e *Engine) isEOS(tok int) bool {
	for _, id := range e.EOS {
		if id == tok {
			return true
		}
	}
	return false
}

// releasePrefillScratch lets go of the activation buffers the backend
// kept for reuse across a prefill's layers and chunks, and returns the
// freed heap to the system, so that decode runs at the weights plus the
// KV cache: a bf16 0.5B model otherwise kept ~60 MB of prefill buffers
// and, through Go's heap target of twice what is live, as much again of
// decode's garbage (peak RSS 1.18x the file, issue 19's target 1.15x).
// The collection costs a few ms once per prompt.
func releasePrefillScratch() {
	if mlx.ReleaseScratch() > 0 {
		debug.FreeOSMemory()
	}
}

// step runs ids through the model, extending the cache, and returns the
// logits after the last id when wantLogits (the host copy sampling reads).
func (g *generation) step(ids []int, wantLogits bool) []float32 {
	e := g.e
	s := mlx.NewScope()
	defer s.Close()
	tok := mlx.FromSlice(ids, 1, len(ids))
	h := e.Model.Hidden(tok, e.caches)
	e.cached = append(e.cached, ids...)
	if !wantLogits {
		return nil
	}
	last := mlx.SliceAxis(h, 1, len(ids)-1, len(ids))
	lg := e.Model.Logits(last)
	g.logits = lg.Float32sInto(g.logits)
	return g.logits
}
