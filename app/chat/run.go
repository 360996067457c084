package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"hark/app/apierr"
	"hark/app/runner"
	"hark/engine"
	"hark/library"
	"hark/library/store"
	"hark/models/nn"
)

// Event is published on the "chat" topic. Type is one of:
// "loading" (the model is being loaded), "start" (prompt built; Model,
// Completion and any Notice set), "delta" (Delta is new reply text),
// "done" (Done, Message and Stats: the stored reply), "error" (Error; a
// partial reply, if any, is stored and in Message), and "conversation" /
// "deleted" when the list changes.
type Event struct {
	ConversationID int64          `json:"conversationId"`
	Type           string         `json:"type"`
	Delta          string         `json:"delta,omitempty"`
	Done           bool           `json:"done,omitempty"`
	Model          string         `json:"model,omitempty"`
	Completion     bool           `json:"completion,omitempty"`
	Notice         string         `json:"notice,omitempty"`
	Error          string         `json:"error,omitempty"`
	Message        *store.Message `json:"message,omitempty"`
	Stats          *Stats         `json:"stats,omitempty"`
	Live           *LiveStats     `json:"live,omitempty"` // with "delta": speed so far
}

// Stats are stored with each reply (messages.stats) and shown under it.
type Stats struct {
	Model           string  `json:"model"`
	Completion      bool    `json:"completion,omitempty"` // prompted raw, no chat template
	FinishReason    string  `json:"finishReason"`         // stop, length, cancelled, error
	Stopped         bool    `json:"stopped,omitempty"`    // the user stopped it
	Error           string  `json:"error,omitempty"`
	TTFTMs          float64 `json:"ttftMs"`
	PromptTokens    int     `json:"promptTokens"`
	ReusedTokens    int     `json:"reusedTokens"` // served by the prefix cache
	PrefilledTokens int     `json:"prefilledTokens"`
	Tokens          int     `json:"tokens"` // generated
	PromptTPS       float64 `json:"promptTps"`
	GenTPS          float64 `json:"genTps"`
	Trimmed         int     `json:"trimmed,omitempty"` // oldest messages left out to fit
	LoadMs          float64 `json:"loadMs,omitempty"`  // model load before this reply
	KVBytes         int64   `json:"kvBytes,omitempty"` // KV cache memory
	KVBits          int     `json:"kvBits,omitempty"`  // as stored: 0 float32, 16 f16, 4 or 8 quantized
	Drafted         int     `json:"drafted,omitempty"` // speculative decoding
	Accepted        int     `json:"accepted,omitempty"`
	// Logprobs, when the conversation asks for token probabilities.
	Logprobs []engine.TokenLogprob `json:"logprobs,omitempty"`
}

// Status is what the chat runtime is doing.
type Status struct {
	Generating     bool   `json:"generating"`
	ConversationID int64  `json:"conversationId,omitempty"`
	Text           string `json:"text,omitempty"` // the reply so far
	LoadedModel    string `json:"loadedModel,omitempty"`
}

// chatRuntime tracks the replies being written, one per conversation at
// most. The engines belong to the runner, which keeps them across turns.
// Replies share their model's engine (runner.Share): replies in other
// conversations and API requests decode in one batch with them, and the
// engine's prefix trie makes a follow-up prefill only its new tokens. A
// reply the batch cannot serve takes its turn in the runner's line, so a
// second conversation waits instead of being refused.
type chatRuntime struct {
	s  *Service
	wg sync.WaitGroup

	mu       sync.Mutex
	engModel string // the model ID of the latest reply
	runs     map[int64]*chatRun
	latest   int64 // the conversation of the latest claim, for status
	closed   bool
}

type chatRun struct {
	convID  int64
	ctx     context.Context
	cancel  context.CancelFunc
	stopped bool // the user asked to stop (vs. app shutdown)
	text    []byte
	done    chan struct{}
	draftID int64      // the stored draft of this reply (draft.go), 0 until saved
	draft   draftState // touched by the run's goroutine only
}

// close stops every generation and waits for them (the runner frees the
// engines).
func (rt *chatRuntime) close() {
	rt.mu.Lock()
	rt.closed = true
	for _, run := range rt.runs {
		run.cancel()
	}
	rt.mu.Unlock()
	rt.wg.Wait()
}

// claim reserves conversation id for a reply: one at a time per
// conversation; replies in other conversations wait in the runner's line.
func (rt *chatRuntime) claim(id int64) error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	switch {
	case rt.closed:
		return errors.New("Hark is shutting down")
	case rt.runs[id] != nil:
		return apierr.Conflict(errors.New("a reply is already being written in this conversation; stop it first"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	rt.runs[id] = &chatRun{convID: id, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	rt.latest = id
	return nil
}

// release gives up a claim that never started.
func (rt *chatRuntime) release(id int64) {
	rt.mu.Lock()
	if run := rt.runs[id]; run != nil {
		run.cancel()
		close(run.done)
		delete(rt.runs, id)
	}
	rt.mu.Unlock()
}

// start runs the claimed reply for c in the background.
func (rt *chatRuntime) start(c store.Conversation) {
	rt.mu.Lock()
	run := rt.runs[c.ID]
	rt.mu.Unlock()
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		end := rt.generateSafely(run, c)
		// Free the runtime before announcing the end, so a client that
		// sends again as soon as it sees "done" is not refused as busy.
		rt.mu.Lock()
		delete(rt.runs, c.ID)
		rt.mu.Unlock()
		run.cancel()
		close(run.done)
		rt.publish(end)
	}()
}

// generateSafely is generate turning a panic (a bug in a model graph)
// into an error event: the app stays up.
func (rt *chatRuntime) generateSafely(run *chatRun, c store.Conversation) (end Event) {
	defer func() {
		if v := recover(); v != nil {
			rt.s.Log.Error("chat panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			end = rt.fail(run, c, fmt.Errorf("internal error: %v", v), nil)
		}
	}()
	return rt.generate(run, c)
}

// stop cancels the reply in conversation id, if one is running.
func (rt *chatRuntime) stop(id int64) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if run := rt.runs[id]; run != nil {
		run.stopped = true
		run.cancel()
	}
}

// stopAndWait stops the reply in conversation id and waits until it is
// stored (used before deleting the conversation).
func (rt *chatRuntime) stopAndWait(id int64) {
	rt.mu.Lock()
	var done chan struct{}
	if run := rt.runs[id]; run != nil {
		run.stopped = true
		run.cancel()
		done = run.done
	}
	rt.mu.Unlock()
	if done != nil {
		<-done
	}
}

func (rt *chatRuntime) status() Status {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	st := Status{LoadedModel: rt.engModel}
	run := rt.runs[rt.latest]
	if run == nil {
		for _, r := range rt.runs {
			run = r
			break
		}
	}
	if run != nil {
		st.Generating, st.ConversationID, st.Text = true, run.convID, string(run.text)
	}
	return st
}

func (rt *chatRuntime) publish(ev Event) { rt.s.Publish("chat", ev) }

// generate writes one reply: load the model, build the prompt, stream,
// store. It returns the final event (done, or error: none is fatal) for
// the caller to publish once the runtime is free.
func (rt *chatRuntime) generate(run *chatRun, c store.Conversation) Event {
	ctx := run.ctx
	var loadMs float64
	stoppedEarly := func() Event {
		// Stopped while waiting for the model: nothing was written.
		stats := Stats{Model: c.Model, FinishReason: engine.FinishCancelled, Stopped: true, LoadMs: loadMs}
		m, _ := rt.store(run, c.ID, "", stats)
		return Event{ConversationID: c.ID, Type: "done", Done: true, Message: &m, Stats: &stats}
	}
	// A shared lease: replies in other conversations and API requests on
	// the same model decode in one batch with this one. A load checks the
	// memory for the KV cache the conversation keeps.
	kv := samplingOf(c).KV()
	lease, err := rt.engineFor(ctx, c.Model, kv, func() {
		rt.publish(Event{ConversationID: c.ID, Type: "loading", Model: c.Model})
	}, &loadMs, true)
	if err != nil && ctx.Err() != nil {
		return stoppedEarly()
	}
	if err != nil {
		return rt.fail(run, c, err, nil)
	}
	defer lease.Release()
	e := lease.Engine
	msgs, err := rt.s.DB.Messages(ctx, c.ID)
	if err != nil {
		return rt.fail(run, c, err, nil)
	}
	sampling := samplingOf(c)
	opt := sampling.options(e.Defaults)
	vars, notices, err := sampling.templateVars(e)
	if err != nil {
		return rt.fail(run, c, err, nil)
	}
	if opt.Constraint, err = sampling.constraint(e); err != nil {
		return rt.fail(run, c, err, nil)
	}
	batched := e.Batchable(opt) && !usesDraftModel(sampling)
	if !batched {
		// The single path (a family the batch does not serve, a drafter,
		// structured output, a quantized KV cache) keeps its turn in the
		// runner's line, as before the batch: first come, first served,
		// and a stop while waiting leaves the line at once.
		// The turn judges the conversation's KV cache (runner.AcquireKV).
		turn, err := rt.s.Runner.AcquireKV(ctx, runner.Chat, lease.dir, kv, nil)
		if err != nil && ctx.Err() != nil {
			return stoppedEarly()
		}
		if err != nil {
			return rt.fail(run, c, err, nil)
		}
		defer turn.Release()
	}
	releaseDraft, err := rt.draftModelFor(ctx, sampling, e, &opt)
	if err != nil {
		return rt.fail(run, c, err, nil)
	}
	defer releaseDraft()
	live := newLiveMeter(&opt)
	p, err := buildPrompt(ctx, e, c.SystemPrompt, msgs, replyReserve(e, opt.MaxTokens), vars)
	if err != nil && ctx.Err() != nil {
		// Stopped while the template or tokenizer ran: a stopped reply
		// with nothing written, not a failure.
		stats := Stats{Model: c.Model, FinishReason: engine.FinishCancelled, Stopped: true, LoadMs: loadMs}
		m, _ := rt.store(run, c.ID, "", stats)
		return Event{ConversationID: c.ID, Type: "done", Done: true, Message: &m, Stats: &stats}
	}
	if err != nil {
		return rt.fail(run, c, err, nil)
	}
	if batched {
		// Its row of the batch holds keys and values of its own: reserved
		// against the runner's budget before anything streams, waiting
		// while other rows hold it (runner.Lease.Reserve).
		if err := lease.Reserve(ctx, lease.RowTokens(len(p.ids), opt.MaxTokens)); err != nil {
			if ctx.Err() != nil {
				return stoppedEarly()
			}
			return rt.fail(run, c, err, nil)
		}
	}
	start := Event{ConversationID: c.ID, Type: "start", Model: c.Model, Completion: p.completion}
	if p.trimmed > 0 {
		notices = append(notices, trimNotice(p.trimmed, e.Model.Info().MaxContext))
	}
	start.Notice = strings.Join(notices, " ")
	rt.publish(start)

	// Deltas are coalesced to at most ~40 events a second: a fast model
	// would otherwise flood slow SSE clients, which then drop events.
	var pending []byte
	last := time.Now()
	flush := func() {
		if len(pending) > 0 {
			rt.publish(Event{ConversationID: c.ID, Type: "delta", Delta: string(pending), Live: live.stats()})
			pending = pending[:0]
			last = time.Now()
		}
	}
	res, genErr := e.GenerateBatched(ctx, p.ids, opt, func(s string) error {
		rt.mu.Lock()
		run.text = append(run.text, s...)
		rt.mu.Unlock()
		pending = append(pending, s...)
		if time.Since(last) >= 25*time.Millisecond {
			flush()
		}
		if rt.s.TokenHook != nil {
			rt.s.TokenHook()
		}
		rt.saveDraft(run, c)
		return nil
	})
	flush()
	stats := Stats{Model: c.Model, Completion: p.completion, Trimmed: p.trimmed, LoadMs: loadMs}
	if res != nil {
		fillStats(&stats, res)
	}
	if genErr != nil {
		return rt.fail(run, c, fmt.Errorf("generation failed: %w", genErr), &stats)
	}
	rt.mu.Lock()
	stats.Stopped = run.stopped && res.FinishReason == engine.FinishCancelled
	rt.mu.Unlock()
	m, err := rt.store(run, c.ID, res.Text, stats)
	if err != nil {
		return rt.fail(run, c, err, nil)
	}
	return Event{ConversationID: c.ID, Type: "done", Done: true, Message: &m, Stats: &stats}
}

// fail makes the error event for err; any partial reply is stored with
// the error in its stats so the thread shows what was written before
// things went wrong.
func (rt *chatRuntime) fail(run *chatRun, c store.Conversation, err error, stats *Stats) Event {
	rt.s.Log.Warn("chat reply failed", "conversation", c.ID, "model", c.Model, "err", err)
	ev := Event{ConversationID: c.ID, Type: "error", Error: err.Error(), Done: true}
	rt.mu.Lock()
	partial := string(run.text)
	rt.mu.Unlock()
	if partial != "" {
		if stats == nil {
			stats = &Stats{Model: c.Model}
		}
		stats.FinishReason, stats.Error = "error", err.Error()
		if m, serr := rt.store(run, c.ID, partial, *stats); serr == nil {
			ev.Message, ev.Stats = &m, stats
		}
	}
	return ev
}

// store saves a reply unless it is empty (a reply stopped before its first
// token leaves the thread ending with the user's message). A reply with a
// draft rewrites it, so the thread holds it once.
func (rt *chatRuntime) store(run *chatRun, convID int64, text string, stats Stats) (store.Message, error) {
	if text == "" && run.draft.id != 0 {
		rt.mu.Lock()
		text = string(run.text)
		rt.mu.Unlock()
	}
	if text == "" {
		return store.Message{ConversationID: convID, Role: "assistant"}, nil
	}
	raw, err := json.Marshal(stats)
	if err != nil {
		return store.Message{}, err
	}
	m, err := rt.s.DB.SaveDraft(context.Background(), store.Message{ID: run.draft.id, CreatedAt: run.draft.created, ConversationID: convID, Role: "assistant", Content: text, Stats: raw})
	if err != nil {
		return m, fmt.Errorf("save the reply: %w", err)
	}
	return m, nil
}

// engineFor leases the engine for model from the runner, loading it
// when needed (onLoad is called first) with a memory check that assumes
// the replies keep their KV cache as kv: shared (runner.ShareKV) for
// generations through GenerateBatched, else exclusive (runner.AcquireKV),
// waiting for its turn.
func (rt *chatRuntime) engineFor(ctx context.Context, model string, kv nn.KVQuant, onLoad func(), loadMs *float64, shared bool) (*chatLease, error) {
	if model == "" {
		return nil, errNoModel
	}
	lib := rt.s.Library
	if lib == nil {
		return nil, errors.New("the model library is not running")
	}
	m, err := lib.Resolve(context.Background(), model)
	if errors.Is(err, library.ErrNotFound) {
		rt.forget(model)
		return nil, fmt.Errorf("model %s is not in your Library; choose one from the list", model)
	}
	if err != nil {
		return nil, fmt.Errorf("find model %s: %w", model, err)
	}
	if err := checkChatModel(m); err != nil {
		return nil, err
	}
	// The index can lag the disk: check the files are still there.
	if _, err := os.Stat(filepath.Join(m.Path, "config.json")); err != nil {
		rt.s.Runner.Unload(runner.Chat, m.Path)
		rt.forget(model)
		return nil, fmt.Errorf("the files of model %s were removed from %s; choose another model", model, m.Path)
	}
	take := rt.s.Runner.AcquireKV
	if shared {
		take = rt.s.Runner.ShareKV
	}
	lease, err := take(ctx, runner.Chat, m.Path, kv, onLoad)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("cannot load %s: %w", model, err)
	}
	if lease.Loaded {
		*loadMs = float64(lease.LoadTime.Microseconds()) / 1000
	}
	rt.mu.Lock()
	rt.engModel = model
	rt.mu.Unlock()
	return &chatLease{Lease: lease, dir: m.Path}, nil
}

// chatLease is a lease on a chat model and the folder it was loaded from.
type chatLease struct {
	*runner.Lease
	dir string
}

// forget clears the status's loaded model when it is model.
func (rt *chatRuntime) forget(model string) {
	rt.mu.Lock()
	if rt.engModel == model {
		rt.engModel = ""
	}
	rt.mu.Unlock()
}

// checkChatModel explains why a library model cannot chat.
func checkChatModel(m library.Model) error {
	switch {
	case m.Kind != "" && m.Kind != "chat":
		return fmt.Errorf("%s is a %s model, not a chat model; choose a chat model", m.ID, m.Kind)
	case !m.Supported:
		reason := m.Reason
		if reason == "" {
			reason = "not supported"
		}
		return fmt.Errorf("%s can't run in Hark: %s", m.ID, reason)
	case m.Downloading:
		return fmt.Errorf("%s is still downloading; wait until it finishes", m.ID)
	}
	return nil
}

// Engine leases model's engine for exclusive use, loading it when needed
// (a transcript's summary runs its own generations on it) with the memory
// check for a conversation that keeps its KV cache as kv; Release gives
// it back.
func (s *Service) Engine(ctx context.Context, model string, kv nn.KVQuant) (*runner.Lease, error) {
	var loadMs float64
	l, err := s.rt.engineFor(ctx, model, kv, nil, &loadMs, false)
	if err != nil {
		return nil, err
	}
	return l.Lease, nil
}
