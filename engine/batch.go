package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"hark/mlx"
	"hark/models/llm"
	"hark/models/nn"
)

// Batched decode: generations that run at the same time on one engine
// decode together, one forward pass per step for all of them, because a
// decode step reads every weight once whatever the batch size, so B rows
// cost little more than one. Each row prefills alone in its own caches
// (one chunk between two decode steps, so a long prompt never stalls the
// others for more than a chunk), then joins the batch: its caches become
// its row of the layers' nn.BatchCaches, where it attends alone, and it
// keeps its own sampler, stop strings and limits. A row that finishes or
// is cancelled leaves between two steps, touching no other row. The
// projections run for all rows at once, and the CPU kernels sum each row
// as alone (but the AMX 4-bit one, from 4 rows), so a row's tokens are,
// to the bit, those it would get alone.
//
// One goroutine per engine runs the steps, holding the engine's lock for
// one step at a time, so plain Generate calls interleave with the batch at
// step granularity.

// MaxBatchRows bounds the rows decoding together; later requests wait to
// join. Memory is not its job: each row holds its own keys and values,
// which the runner reserves per row (runner.Lease.Reserve) against its
// budget, and which Result.Stats.KVCacheBytes and BatchStats report.
// Up to 16 rows the CPU kernels sum each row as alone (kernels'
// SgemmRowsMaxM, HMatmulRowsMaxM): raising this needs them raised too.
const MaxBatchRows = 16

// batcher is an engine's batch of running rows.
type batcher struct {
	mu      sync.Mutex
	pending []*row
	running bool       // the loop goroutine is alive
	stats   BatchStats // what BatchStats reports (batch_stats.go)

	// Owned by the loop goroutine.
	joining []*row
	active  []*row
	caches  []nn.Cache // one *nn.BatchCache per layer, nil while empty
	logits  []float32
	steps   int // decode steps run, for tests
}

// row is one generation in the batch.
type row struct {
	ctx    context.Context
	g      *generation
	prompt []int
	done   chan struct{}
	res    *Result
	err    error
	ended  bool
	out    *textQueue // nil without onText

	caches  []nn.Cache // its own, while it prefills
	todo    []int      // prompt tokens still to prefill
	chunks  *prefillChunker
	smp     *sampler
	stream  interface{ Add(int) string }
	flush   func() string
	stop    *stopper
	history []int
	text    []byte
	firstAt time.Time
	pos     int   // positions in its cache
	kvBytes int64 // the memory its keys and values take, for Stats
	next    int   // the token the next step feeds
}

// Batchable reports whether generations with opt can decode in a batch on
// this engine: the model's family supports it (llm.BatchDecoder), its
// caches are attention caches (nn.Batchable), and opt asks for nothing
// the batch does not do (speculative decoding, structured output, or a
// KV setting other than the engine's, whose prefix cache holds positions
// stored the engine's way). Generate serves the others alone.
func (e *Engine) Batchable(opt Options) bool {
	if opt.Draft != nil || opt.Constraint != nil {
		return false
	}
	kv := e.kvFor(opt)
	return e.batchOK && kv == e.KV
}

// initBatch records at load whether the model can decode in a batch.
func (e *Engine) initBatch() {
	if _, ok := e.Model.(llm.BatchDecoder); !ok {
		return
	}
	cs := e.Model.NewCaches()
	defer nn.FreeCaches(cs)
	for _, c := range cs {
		if !nn.Batchable(c) {
			return
		}
	}
	e.batchOK = true
}

// GenerateBatched is Generate for a generation that may run at the same
// time as others on this engine: it joins the engine's batch when
// Batchable, else it runs alone through Generate. onText runs on the
// calling goroutine, fed from the batch through a queue, so a slow
// consumer (a client reading a stream slowly) never holds up the other
// rows; an error from it ends this row at its next step.
func (e *Engine) GenerateBatched(ctx context.Context, prompt []int, opt Options, onText func(string) error) (*Result, error) {
	if !e.Batchable(opt) {
		return e.Generate(ctx, prompt, opt, onText)
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if err := validateLogprobs(&opt); err != nil {
		return nil, err
	}
	if len(prompt) == 0 {
		return nil, errors.New("generate: empty prompt (a raw prompt needs at least BOS)")
	}
	e.mu.Lock()
	closed := e.Model == nil
	var info llm.Info
	if !closed {
		info = e.Model.Info()
	}
	e.mu.Unlock()
	if closed {
		return nil, errors.New("generate: engine is closed")
	}
	for _, id := range prompt {
		if id < 0 || id >= info.VocabSize {
			return nil, fmt.Errorf("generate: prompt token %d outside the vocabulary (%d)", id, info.VocabSize)
		}
	}
	if info.MaxContext > 0 && len(prompt) >= info.MaxContext {
		return nil, fmt.Errorf("generate: prompt of %d tokens fills the %d-token context", len(prompt), info.MaxContext)
	}
	r := &row{ctx: ctx, prompt: prompt, done: make(chan struct{}),
		g: &generation{e: e, opt: opt, start: time.Now()}}
	onLogprob := opt.OnLogprob
	if onText != nil || onLogprob != nil {
		r.out = &textQueue{ready: make(chan struct{}, 1)}
	}
	if onLogprob != nil {
		r.g.opt.OnLogprob = func(lp TokenLogprob) { r.out.putLogprob(lp) }
	}
	b := &e.batch
	b.mu.Lock()
	b.pending = append(b.pending, r)
	b.stats.Rows++
	start := !b.running
	b.running = true
	b.mu.Unlock()
	if start {
		go e.batchLoop()
	}
	if r.out == nil {
		<-r.done
		return r.res, r.err
	}
	var cbErr error
	deliver := func() {
		for _, it := range r.out.take() {
			switch {
			case cbErr != nil:
			case it.lp != nil:
				onLogprob(*it.lp)
			case onText != nil:
				if cbErr = onText(it.text); cbErr != nil {
					r.out.fail(cbErr)
				}
			}
		}
	}
	for {
		select {
		case <-r.out.ready:
			deliver()
		case <-r.done:
			deliver()
			if r.err == nil && cbErr != nil {
				return r.res, cbErr
			}
			return r.res, r.err
		}
	}
}

// textQueue carries a row's text and logprobs, in order, from the batch
// to its caller.
type textQueue struct {
	mu    sync.Mutex
	texts []queued
	err   error // the caller's onText failed
	ready chan struct{}
}

// put queues s and returns the caller's error, if any so far.
func (q *textQueue) put(s string) error {
	q.mu.Lock()
	q.texts = append(q.texts, queued{text: s})
	err := q.err
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return err
}

// queued is a piece of text, or a token's logprob.
type queued struct {
	text string
	lp   *TokenLogprob
}

func (q *textQueue) putLogprob(lp TokenLogprob) {
	q.mu.Lock()
	q.texts = append(q.texts, queued{lp: &lp})
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *textQueue) take() []queued {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.texts
	q.texts = nil
	return t
}

func (q *textQueue) fail(err error) {
	q.mu.Lock()
	q.err = err
	q.mu.Unlock()
}

func (q *textQueue) failed() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// BatchSteps is how many batched decode steps the engine has run.
func (e *Engine) BatchSteps() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.batch.steps
}

// batchLoop runs until no row is left: one prefill chunk of the oldest
// joining row, then one decode step of the batch, and again.
func (e *Engine) batchLoop() {
	b := &e.batch
	for {
		b.mu.Lock()
		b.joining = append(b.joining, b.pending...)
		b.pending = nil
		if len(b.joining) == 0 && len(b.active) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		e.mu.Lock()
		e.batchRound()
		e.noteBatch()
		e.mu.Unlock()
	}
}

// batchRound is one round of the loop, with e.mu held.
func (e *Engine) batchRound() {
	b := &e.batch
	defer func() {
		// A panic inside the graph leaves every cache in an unknown
		// state: fail the rows rather than the process.
		if p := recover(); p != nil {
			err := fmt.Errorf("generate: %v", p)
			for _, r := range append(b.joining, b.active...) {
				nn.FreeCaches(r.caches)
				r.end(nil, err)
			}
			b.joining, b.active = nil, nil
			nn.FreeCaches(b.caches)
			b.caches = nil
		}
	}()
	if e.Model == nil {
		for _, r := range append(b.joining, b.active...) {
			nn.FreeCaches(r.caches)
			r.end(nil, errors.New("generate: engine is closed"))
		}
		nn.FreeCaches(b.caches)
		b.joining, b.active, b.caches = nil, nil, nil
		return
	}
	// Prefill joining rows, oldest first, up to one chunk's worth of
	// tokens between two decode steps: short prompts join together, a
	// long one holds the batch up for one chunk at most.
	budget := e.prefillChunks(0).next()
	for len(b.joining) > 0 && budget > 0 && len(b.active) < MaxBatchRows {
		r := b.joining[0]
		before := len(r.todo)
		if r.caches == nil {
			before = len(r.prompt)
		}
		if !e.prefillChunk(r) {
			break
		}
		b.joining = b.joining[1:]
		budget -= before
	}
	if len(b.active) > 0 {
		e.decodeStep()
	}
}

// prefillChunk runs one chunk of r's prompt; when the prompt is done it
// takes r's first token and moves r into the batch (or ends it). It
// reports whether r left the joining line.
func (e *Engine) prefillChunk(r *row) bool {
	b := &e.batch
	if r.caches == nil {
		r.caches = nn.QuantizeCaches(e.Model.NewCaches(), e.KV)
		reused := e.prefix.restore(r.prompt, r.caches)
		r.todo = r.prompt[reused:]
		r.pos = reused
		r.chunks = e.prefillChunks(r.g.opt.PrefillChunk)
		res := &Result{}
		res.Stats.PromptTokens = len(r.prompt)
		res.Stats.ReusedTokens = reused
		r.res = res
	}
	if r.ctx.Err() != nil {
		// What it prefilled before the cancel is kept for a retry.
		e.prefix.insert(r.prompt[:r.pos], r.caches)
		nn.FreeCaches(r.caches)
		r.res.FinishReason = FinishCancelled
		r.end(r.res, nil)
		return true
	}
	n := min(r.chunks.next(), len(r.todo))
	t0 := time.Now()
	s := mlx.NewScope()
	h := e.Model.Hidden(mlx.FromSlice(r.todo[:n], 1, n), r.caches)
	var logits []float32
	if n == len(r.todo) {
		lg := e.Model.Logits(mlx.SliceAxis(h, 1, n-1, n))
		logits = lg.Float32s()
	}
	s.Close()
	if n == len(r.todo) {
		releasePrefillScratch()
	}
	r.chunks.took(n, time.Since(t0))
	r.kvBytes = nn.CacheBytes(r.caches) // what it holds so far, should it end here
	r.todo = r.todo[n:]
	r.pos += n
	st := &r.res.Stats
	st.PrefilledTokens += n
	if len(r.todo) > 0 {
		return false
	}
	e.prefix.insert(r.prompt, r.caches)
	st.PrefillTime = time.Since(r.g.start)
	if st.PrefillTime > 0 {
		st.PromptTPS = float64(st.PrefilledTokens) / st.PrefillTime.Seconds()
	}
	r.smp = newSampler(r.g.opt.Sampling)
	stream := e.Tokenizer.NewStream()
	stream.SkipSpecial = true
	r.stream, r.flush = stream, stream.Flush
	r.stop = newStopper(r.g.opt.Stop)
	r.history = append([]int(nil), r.prompt...)
	if !r.take(logits) {
		nn.FreeCaches(r.caches)
		return true
	}
	if b.caches == nil {
		b.caches = e.Model.(llm.BatchDecoder).BatchCaches()
	}
	for i, c := range b.caches {
		// The batch takes the row's caches over.
		if _, err := c.(*nn.BatchCache).Add(r.caches[i]); err != nil {
			panic(err)
		}
	}
	r.caches = nil
	b.active = append(b.active, r)
	return true
}

// decodeStep feeds every active row its last token in one forward pass,
// lets each row take its next token, and removes the rows that ended.
func (e *Engine) decodeStep() {
	b := &e.batch
	// Rows cancelled since the last step leave before it.
	e.dropRows(func(r *row) bool {
		if r.ctx.Err() == nil {
			return false
		}
		r.res.FinishReason = FinishCancelled
		r.end(r.g.finish(r.res, r.firstAt, r.text), nil)
		return true
	})
	n := len(b.active)
	if n == 0 {
		return
	}
	ids := make([]int, n)
	for i, r := range b.active {
		ids[i] = r.next
	}
	s := mlx.NewScope()
	h := e.Model.Hidden(mlx.FromSlice(ids, n, 1), b.caches)
	b.logits = e.Model.Logits(h).Float32sInto(b.logits)
	s.Close()
	b.steps++
	e.noteStep()
	vocab := len(b.logits) / n
	// Sampling a large vocabulary costs about as much per row as the
	// step's matmuls do per row, and rows sample independently (each its
	// own logits, history and random stream): spread them over the cores.
	// Streaming the tokens stays in row order on this goroutine.
	toks := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, r := range b.active {
		wg.Add(1)
		go func() {
			defer wg.Done()
			toks[i], errs[i] = r.pick(b.logits[i*vocab : (i+1)*vocab])
		}()
	}
	wg.Wait()
	ended := make(map[*row]bool)
	for i, r := range b.active {
		r.pos++
		r.kvBytes = 0
		for _, c := range b.caches {
			r.kvBytes += c.(*nn.BatchCache).RowBytes(i)
		}
		if !r.accept(toks[i], errs[i]) {
			ended[r] = true
		}
	}
	e.dropRows(func(r *row) bool { return ended[r] })
}

// dropRows removes the active rows gone says are gone, from the batch
// caches too. Each leaves its prompt and reply in the prefix trie first:
// a chat's next turn repeats both, and reuses them to the token.
func (e *Engine) dropRows(gone func(*row) bool) {
	b := &e.batch
	for i := len(b.active) - 1; i >= 0; i-- {
		r := b.active[i]
		if !gone(r) {
			continue
		}
		// The row's cache holds the tokens it was fed: its prompt and
		// every token it generated but the last.
		e.prefix.insertRow(r.history[:min(r.pos, len(r.history))], b.caches, i)
		for _, c := range b.caches {
			c.(*nn.BatchCache).Remove(i)
		}
		b.active = append(b.active[:i], b.active[i+1:]...)
	}
	if len(b.active) == 0 && b.caches != nil {
		nn.FreeCaches(b.caches)
		b.caches = nil
	}
}

// take samples r's next token from logits (the row's own, modified in
// place) and streams it; it reports false when r has ended (and r.done
// is closed).
func (r *row) take(logits []float32) bool {
	return r.accept(r.pick(logits))
}

// pick samples r's next token from logits, touching nothing shared.
func (r *row) pick(logits []float32) (int, error) {
	if err := r.g.checkLogits(logits, len(r.res.Tokens)); err != nil {
		return 0, err
	}
	if r.g.opt.Logprobs {
		r.g.prepareLogprobs(logits)
	}
	return r.smp.sample(logits, r.history), nil
}

// accept streams tok, or ends r with err; it reports false when r has
// ended.
func (r *row) accept(tok int, err error) bool {
	g, e, res := r.g, r.g.e, r.res
	if err != nil {
		r.end(g.finish(res, r.firstAt, r.text), err)
		return false
	}
	if r.firstAt.IsZero() {
		r.firstAt = time.Now()
		res.Stats.TimeToFirstToken = r.firstAt.Sub(g.start)
	}
	if e.isEOS(tok) {
		res.FinishReason = FinishStop
		return r.close()
	}
	if g.opt.Logprobs {
		g.recordLogprob(res, tok)
	}
	res.Tokens = append(res.Tokens, tok)
	if g.opt.OnToken != nil {
		g.opt.OnToken(len(res.Tokens))
	}
	r.history = append(r.history, tok)
	r.smp.observe(tok)
	out, stopped := r.stop.add(r.stream.Add(tok))
	if err := r.emit(out); err != nil {
		r.end(g.finish(res, r.firstAt, r.text), err)
		return false
	}
	maxCtx := e.Model.Info().MaxContext
	switch {
	case stopped:
		res.FinishReason = FinishStop
	case g.opt.MaxTokens > 0 && len(res.Tokens) >= g.opt.MaxTokens:
		res.FinishReason = FinishLength
	case maxCtx > 0 && r.pos+1 >= maxCtx:
		res.FinishReason = FinishLength
	case r.ctx.Err() != nil:
		res.FinishReason = FinishCancelled
	case r.out != nil && r.out.failed() != nil:
		r.end(g.finish(res, r.firstAt, r.text), r.out.failed())
		return false
	default:
		r.next = tok
		return true
	}
	return r.close()
}

func (r *row) emit(s string) error {
	if s == "" {
		return nil
	}
	r.text = append(r.text, s...)
	if r.out != nil {
		return r.out.put(s)
	}
	return nil
}

// close flushes what the stream and stop strings held back and ends r.
func (r *row) close() bool {
	var err error
	if !r.stop.hit {
		out, _ := r.stop.add(r.flush())
		if err = r.emit(out); err == nil {
			err = r.emit(r.stop.flush())
		}
	}
	r.end(r.g.finish(r.res, r.firstAt, r.text), err)
	return false
}

// end hands the result to the waiting caller and counts it.
func (r *row) end(res *Result, err error) {
	if r.ended {
		return
	}
	r.ended = true
	e := r.g.e
	if res != nil {
		// Its own keys and values in the batch, stored as the
		// engine's KV setting (Batchable).
		res.Stats.KVCacheBytes, res.Stats.KVBits = r.kvBytes, e.KV.Bits
		e.counters.PrefilledTokens += res.Stats.PrefilledTokens
		e.counters.ReusedTokens += res.Stats.ReusedTokens
		e.counters.GeneratedTokens += res.Stats.GeneratedTokens
	}
	e.counters.Requests++
	e.batch.endRow()
	r.res, r.err = res, err
	close(r.done)
}
