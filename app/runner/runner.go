package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"hark/engine"
	"hark/engine/transcribe"
	"hark/models/nn"
)

// Kind is what a model does.
type Kind string

// The kinds of model the runner loads.
const (
	Chat   Kind = "chat"
	Speech Kind = "speech"
	// Draft is a chat model loaded to draft for another (speculative
	// decoding): a slot of its own, so its cache is its own and a lease
	// on it never waits behind the chat model it drafts for; it counts
	// against the same memory budget. Take it after the target's lease.
	Draft Kind = "draft"
)

// DefaultIdle is how long an unused model stays loaded.
const DefaultIdle = 10 * time.Minute

// Options configure a Runner.
type Options struct {
	// Idle unloads a model nobody used for this long (0: DefaultIdle).
	Idle time.Duration
	// Limit caps the sum of the loaded models' estimates and their rows'
	// keys and values, in bytes (0: only the memory the system has
	// available); SetLimit changes it.
	Limit int64
	// Available is the memory a model may still take (nil:
	// engine.MemoryBudget); 0 means unknown, and skips that check.
	Available func() int64
	Log       *slog.Logger
}

// ErrClosed is returned once the runner is shut down.
var ErrClosed = errors.New("Hark is shutting down")

// Runner owns the loaded models. Its methods are safe for concurrent use.
type Runner struct {
	opt    Options
	loadMu sync.Mutex // one load (and its evictions) at a time

	mu     sync.Mutex
	slots  map[key]*slot
	idle   time.Duration
	closed bool
	stop   chan struct{}
	wake   chan struct{} // the idle time changed
	done   chan struct{}
	// rowsChanged is closed, and replaced, when a row's reservation is
	// given back or the limit changes (rows.go).
	rowsChanged chan struct{}
	limit       atomic.Int64 // Options.Limit, or what SetLimit set
}

type key struct {
	kind Kind
	dir  string
}

// slot is one model, loaded or loading.
type slot struct {
	key
	bytes    int64         // the memory estimate it was admitted with
	kv       nn.KVQuant    // the KV cache that estimate assumed
	loaded   chan struct{} // closed when the load ended (err says how)
	err      error
	chat     *engine.Engine
	speech   *transcribe.Model
	loadTime time.Duration
	refs     int // leases held or waited for: never evicted while > 0
	lastUsed time.Time
	queue    fifo
	drop     bool // unload when the last lease ends
	// The keys and values bytes counts for one conversation, per token,
	// and the tokens of each row reserved on it (rows.go).
	kvBase, perToken int64
	context          int // the conversation the estimate assumes, in tokens
	rows             []int
}

// New starts a runner and its idle sweeper; Close stops both.
func New(opt Options) *Runner {
	if opt.Available == nil {
		opt.Available = engine.MemoryBudget
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	r := &Runner{opt: opt, slots: map[key]*slot{}, stop: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{}),
		rowsChanged: make(chan struct{})}
	r.SetIdle(opt.Idle)
	r.limit.Store(opt.Limit)
	go r.sweep()
	return r
}

// SetIdle changes the idle time (0: DefaultIdle), e.g. from Settings.
func (r *Runner) SetIdle(d time.Duration) {
	if d <= 0 {
		d = DefaultIdle
	}
	r.mu.Lock()
	r.idle = d
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// SetLimit changes the memory limit (0: none but the system's); rows
// waiting for room look again.
func (r *Runner) SetLimit(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.limit.Store(max(n, 0))
	close(r.rowsChanged)
	r.rowsChanged = make(chan struct{})
}

// Lease is exclusive use of one loaded model until Release.
type Lease struct {
	r *Runner
	s *slot
	// Engine is set for a chat model, Speech for a speech model.
	Engine *engine.Engine
	Speech *transcribe.Model
	// Loaded says this lease loaded the model, taking LoadTime.
	Loaded   bool
	LoadTime time.Duration
	once     sync.Once
	shared   bool // from Share: holds no place in the model's line
	row      int  // the tokens of its reserved row (Reserve), 0: none
}

// Release gives the model to the next waiter. Safe to call twice.
func (l *Lease) Release() {
	l.once.Do(func() {
		if !l.shared {
			l.s.queue.release()
		}
		l.r.mu.Lock()
		l.r.releaseRow(l)
		l.r.mu.Unlock()
		l.r.unref(l.s)
	})
}

// Share is Acquire for a chat model used through
// engine.GenerateBatched: the model stays loaded (never evicted) until
// Release, but the lease is not exclusive, so concurrent generations on it
// decode together in one batch instead of waiting in line. The engine
// still serialises its own steps.
func (r *Runner) Share(ctx context.Context, kind Kind, dir string, onLoad func()) (*Lease, error) {
	return r.ShareKV(ctx, kind, dir, nn.KVQuant{}, onLoad)
}

// ShareKV is Share for a conversation that keeps its KV cache as kv: the
// check before a load assumes that cache, as AcquireKV's does (a batch
// row keeps float keys and values, which its Reserve counts).
func (r *Runner) ShareKV(ctx context.Context, kind Kind, dir string, kv nn.KVQuant, onLoad func()) (*Lease, error) {
	if kind != Chat {
		return nil, fmt.Errorf("only a chat model can be shared (a %s model serves one use at a time)", kind)
	}
	if err := kv.Validate(); err != nil {
		return nil, err
	}
	return r.acquire(ctx, kind, dir, kv, onLoad, false)
}

// Acquire returns exclusive use of the model of kind in dir, loading it
// when needed (onLoad, if not nil, is called first, as a load can take a
// while) and waiting in line behind earlier callers. Cancelling ctx while
// waiting leaves the line with ctx's error.
func (r *Runner) Acquire(ctx context.Context, kind Kind, dir string, onLoad func()) (*Lease, error) {
	return r.acquire(ctx, kind, dir, nn.KVQuant{}, onLoad, true)
}

// AcquireKV is Acquire for generations that keep their KV cache as kv
// (a conversation's setting): the memory check before the load assumes
// that cache, as the chat picker's fit verdict does (engine.Estimate with
// the same KV), so a model that fits with a 4-bit cache loads and one
// that does not is refused the way the picker said. A model loaded for a
// smaller cache and idle now is loaded afresh, so the check runs again.
func (r *Runner) AcquireKV(ctx context.Context, kind Kind, dir string, kv nn.KVQuant, onLoad func()) (*Lease, error) {
	if err := kv.Validate(); err != nil {
		return nil, err
	}
	return r.acquire(ctx, kind, dir, kv, onLoad, true)
}

func (r *Runner) acquire(ctx context.Context, kind Kind, dir string, kv nn.KVQuant, onLoad func(), exclusive bool) (*Lease, error) {
	k := key{kind, dir}
	// What this use needs, read from the headers before taking the lock.
	var need int64
	if kind == Chat {
		if est, err := engine.Estimate(dir, engine.EstimateOptions{KV: kv}); err == nil {
			need = Admission(kind, est)
		}
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	s := r.slots[k]
	var stale *slot
	if s != nil && s.kv != kv && s.refs == 0 && isDone(s.loaded) && s.err == nil && need > s.bytes {
		// Admitted for less than this use needs: reload, checking anew.
		delete(r.slots, k)
		stale, s = s, nil
	}
	fresh := s == nil
	if fresh {
		s = &slot{key: k, loaded: make(chan struct{}), kv: kv}
		r.slots[k] = s
	}
	s.refs++
	r.mu.Unlock()
	if stale != nil {
		stale.free()
	}

	lease := &Lease{r: r, s: s, shared: !exclusive}
	if fresh {
		if onLoad != nil {
			onLoad()
		}
		t0 := time.Now()
		r.load(s)
		lease.Loaded, lease.LoadTime = s.err == nil, time.Since(t0)
	} else {
		select {
		case <-s.loaded:
		case <-ctx.Done():
			r.unref(s)
			return nil, ctx.Err()
		}
	}
	if s.err != nil {
		r.unref(s)
		return nil, s.err
	}
	if exclusive {
		if err := s.queue.acquire(ctx); err != nil {
			r.unref(s)
			return nil, err
		}
	}
	lease.Engine, lease.Speech = s.chat, s.speech
	return lease, nil
}

// load loads s after making room; on failure the slot leaves the table so
// the next caller tries again.
func (r *Runner) load(s *slot) {
	defer close(s.loaded)
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	est, err := engine.Estimate(s.dir, engine.EstimateOptions{KV: s.kv})
	prefix := prefixBytes(s.kind, est)
	if err == nil {
		s.bytes = Admission(s.kind, est)
		s.kvBase, s.context = est.KVCache, est.Context
		// A batch row keeps the engine's default cache whatever cache
		// the admission assumed (another never batches): rows reserve
		// at the default's rate.
		per := est
		if s.kv != (nn.KVQuant{}) {
			if f, ferr := engine.Estimate(s.dir, engine.EstimateOptions{}); ferr == nil {
				per = f
			}
		}
		if per.Context > 0 {
			s.perToken = per.KVCache / int64(per.Context)
		}
		err = r.makeRoom(s)
	}
	if err == nil {
		switch s.kind {
		case Chat, Draft:
			// makeRoom checked the same estimate (with this use's KV
			// cache) against the same budget: Load's own check would
			// assume the default cache and refuse what fits a 4-bit one.
			// Generations still choose their cache (Options.KVBits).
			s.chat, err = engine.Load(s.dir, engine.LoadOptions{PrefixCacheBytes: prefix, SkipMemoryCheck: true})
		case Speech:
			s.speech, err = transcribe.Open(s.dir)
		default:
			err = fmt.Errorf("unknown model kind %q", s.kind)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s.lastUsed = time.Now()
	if err != nil {
		s.err = err
		delete(r.slots, s.key)
		return
	}
	r.opt.Log.Info("model loaded", "kind", s.kind, "dir", s.dir, "estimate", s.bytes)
}

// Admission is the memory the runner counts for a model of kind whose
// estimate is est, and checks against the budget before loading it: the
// estimate and, for a chat model, its prefix cache. A fit verdict that
// promises the runner will load a model uses this figure.
func Admission(kind Kind, est engine.MemoryEstimate) int64 {
	return est.Total + max(prefixBytes(kind, est), 0)
}

// prefixBytes is the memory a model of kind may hold in its shared
// prefix cache (engine.LoadOptions.PrefixCacheBytes), which its admission
// counts: for a chat model a quarter of the KV cache the estimate allows
// a conversation, capped at engine.DefaultPrefixCacheBytes; a draft model
// generates alone and keeps none (-1).
func prefixBytes(kind Kind, est engine.MemoryEstimate) int64 {
	if kind != Chat {
		return -1
	}
	return max(1, min(est.KVCache/4, engine.DefaultPrefixCacheBytes))
}

// makeRoom unloads idle models, least recently used first, until s fits
// the budget; it refuses when it cannot.
func (r *Runner) makeRoom(s *slot) error {
	for {
		avail := r.opt.Available()
		r.mu.Lock()
		var held int64
		var idle []*slot
		for _, o := range r.slots {
			if o == s || !isDone(o.loaded) || o.err != nil {
				continue
			}
			held += o.held()
			if o.refs == 0 {
				idle = append(idle, o)
			}
		}
		limit := r.limit.Load()
		fits := (avail <= 0 || s.bytes <= avail) && (limit <= 0 || held+s.bytes <= limit)
		if fits {
			r.mu.Unlock()
			return nil
		}
		if len(idle) == 0 {
			r.mu.Unlock()
			return r.refusal(s, avail, held)
		}
		sort.Slice(idle, func(i, j int) bool { return idle[i].lastUsed.Before(idle[j].lastUsed) })
		victim := idle[0]
		delete(r.slots, victim.key)
		r.mu.Unlock()
		r.opt.Log.Info("model unloaded to make room", "kind", victim.kind, "dir", victim.dir, "for", s.dir)
		victim.free()
	}
}

func (r *Runner) refusal(s *slot, avail, held int64) error {
	if limit := r.limit.Load(); limit > 0 && held+s.bytes > limit {
		return fmt.Errorf("cannot load %s: it needs about %s, and the models in use already hold %s of the %s memory limit; wait for them to finish or raise the limit",
			s.dir, size(s.bytes), size(held), size(limit))
	}
	return fmt.Errorf("cannot load %s: it needs about %s of memory but only %s is available (models in use hold %s); choose a smaller or more quantized model, or wait for the others to finish",
		s.dir, size(s.bytes), size(avail), size(held))
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// free unloads the model; the slot is out of the table and unused.
func (s *slot) free() {
	if s.chat != nil {
		s.chat.Close()
		s.chat = nil
	}
	if s.speech != nil {
		s.speech.Close()
		s.speech = nil
	}
}

func (r *Runner) unref(s *slot) {
	r.mu.Lock()
	s.refs--
	s.lastUsed = time.Now()
	gone := s.refs == 0 && (s.drop || r.closed) && r.slots[s.key] == s
	if gone {
		delete(r.slots, s.key)
	}
	r.mu.Unlock()
	if gone {
		s.free()
	}
}

// Unload frees the model of kind in dir now if it is idle, else as soon
// as its last lease ends (its files were removed, say).
func (r *Runner) Unload(kind Kind, dir string) {
	r.mu.Lock()
	s := r.slots[key{kind, dir}]
	if s == nil || !isDone(s.loaded) {
		r.mu.Unlock()
		return
	}
	if s.refs > 0 {
		s.drop = true
		r.mu.Unlock()
		return
	}
	delete(r.slots, s.key)
	r.mu.Unlock()
	s.free()
}

// Model is a loaded model, for status pages.
type Model struct {
	Kind     Kind      `json:"kind"`
	Dir      string    `json:"dir"`
	Bytes    int64     `json:"bytes"` // the memory estimate, with its rows' keys and values
	Rows     int       `json:"rows"`  // batched generations holding a reservation
	InUse    bool      `json:"inUse"`
	Waiting  int       `json:"waiting"`
	LastUsed time.Time `json:"lastUsed"`
	// Counters are a chat model's totals, read when it is idle (a
	// generation holds the engine).
	Counters *engine.Counters `json:"counters,omitempty"`
	// Batch is a chat model's batch of concurrent generations now (read
	// whether or not it is in use: it never waits for a step).
	Batch *engine.BatchStats `json:"batch,omitempty"`
}

// Loaded lists the loaded models, most recently used first.
func (r *Runner) Loaded() []Model {
	r.mu.Lock()
	var out []Model
	var qs []*fifo
	var idle, chats []*engine.Engine
	for _, s := range r.slots {
		if !isDone(s.loaded) || s.err != nil {
			continue
		}
		out = append(out, Model{Kind: s.kind, Dir: s.dir, Bytes: s.held(), Rows: len(s.rows), InUse: s.refs > 0, LastUsed: s.lastUsed})
		qs = append(qs, &s.queue)
		chats = append(chats, s.chat)
		if s.refs == 0 {
			idle = append(idle, s.chat)
		} else {
			idle = append(idle, nil)
		}
	}
	r.mu.Unlock()
	for i, q := range qs {
		out[i].Waiting = q.waiting()
		if e := idle[i]; e != nil {
			c := e.Counters()
			out[i].Counters = &c
		}
		if e := chats[i]; e != nil {
			b := e.BatchStats()
			out[i].Batch = &b
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastUsed.After(out[j].LastUsed) })
	return out
}

// sweep unloads models idle for longer than the idle time.
func (r *Runner) sweep() {
	defer close(r.done)
	for {
		r.mu.Lock()
		every := min(r.idle/4, 30*time.Second)
		r.mu.Unlock()
		select {
		case <-r.stop:
			return
		case <-r.wake:
		case <-time.After(every):
		}
		r.unloadIdle(time.Now())
	}
}

func (r *Runner) unloadIdle(now time.Time) {
	r.mu.Lock()
	var gone []*slot
	for k, s := range r.slots {
		if isDone(s.loaded) && s.err == nil && s.refs == 0 && now.Sub(s.lastUsed) >= r.idle {
			delete(r.slots, k)
			gone = append(gone, s)
		}
	}
	r.mu.Unlock()
	for _, s := range gone {
		r.opt.Log.Info("idle model unloaded", "kind", s.kind, "dir", s.dir)
		s.free()
	}
}

// Close refuses new leases, frees the idle models, and frees each model
// in use when its lease ends.
func (r *Runner) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	close(r.rowsChanged) // rows waiting for room hear ErrClosed
	r.rowsChanged = make(chan struct{})
	var gone []*slot
	for k, s := range r.slots {
		if isDone(s.loaded) && s.refs == 0 {
			delete(r.slots, k)
			gone = append(gone, s)
		}
	}
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	for _, s := range gone {
		s.free()
	}
}

// size says a byte count in the units the Library and the CLI use (GB,
// 10^9): a refusal must not read 7.6 GiB beside a row that says 8.2 GB.
func size(n int64) string { return engine.FormatBytes(n) }
