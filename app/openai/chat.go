package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"hark/app/runner"
	"hark/engine"
	"hark/models/chattemplate"
	"hark/models/profile"
)

// usage is OpenAI's token accounting; cached_tokens are the prompt tokens
// served by the prefix cache.
type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func usageOf(st engine.Stats) *usage {
	u := &usage{PromptTokens: st.PromptTokens, CompletionTokens: st.GeneratedTokens, TotalTokens: st.PromptTokens + st.GeneratedTokens}
	u.PromptTokensDetails.CachedTokens = st.ReusedTokens
	return u
}

// job is one generation as both endpoints run it.
type job struct {
	lease     *runner.Lease
	prompt    []int
	opt       engine.Options
	logprobs  bool // collect per-token logprobs
	modelName string
	prev      int // the token before the next logprob entry (-1: none)
}

// lease resolves the request's chat model, loading it if needed, and
// reads its sampling fields over the model's defaults. The lease is
// shared, so concurrent requests decode together
// (engine.GenerateBatched), and the request's context (a disconnect) ends
// its row within a step. The caller releases the lease, which it holds
// only when err is nil.
func (s *server) lease(ctx context.Context, f *samplingFields) (*runner.Lease, engine.Options, error) {
	m, err := s.resolve(ctx, f.Model, profile.KindChat)
	if err != nil {
		return nil, engine.Options{}, err
	}
	l, err := s.Runner.Share(ctx, runner.Chat, m.Path, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, engine.Options{}, ctx.Err()
		}
		if errors.Is(err, runner.ErrClosed) {
			return nil, engine.Options{}, &Error{Status: 503, Message: err.Error(), Type: typeServer}
		}
		return nil, engine.Options{}, &Error{Status: 503, Message: fmt.Sprintf("cannot load %s: %v", f.Model, err), Type: typeServer, Code: "model_load_failed"}
	}
	opt, err := f.options(l.Engine.Defaults)
	if err != nil {
		l.Release()
		return nil, engine.Options{}, err
	}
	return l, opt, nil
}

// checkFits refuses a prompt the context cannot hold with room to reply.
func checkFits(e *engine.Engine, prompt []int) error {
	if max := e.Model.Info().MaxContext; max > 0 && len(prompt) >= max {
		return &Error{Status: 400, Message: fmt.Sprintf("the prompt is %d tokens, and this model's context holds %d; shorten the messages", len(prompt), max),
			Type: typeInvalid, Param: "messages", Code: "context_length_exceeded"}
	}
	return nil
}

func (s *server) chatCompletions(w http.ResponseWriter, r *http.Request) error {
	var req chatRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if err := req.checkResponseFormat(); err != nil {
		return err
	}
	msgs, err := req.templateMessages()
	if err != nil {
		return err
	}
	tools, err := req.templateTools()
	if err != nil {
		return err
	}
	if req.TopLogprobs != nil && (*req.TopLogprobs < 0 || *req.TopLogprobs > engine.MaxTopLogprobs) {
		return badParam("top_logprobs", "top_logprobs must be between 0 and %d", engine.MaxTopLogprobs)
	}
	if req.TopLogprobs != nil && *req.TopLogprobs > 0 && !req.Logprobs {
		return badParam("logprobs", "top_logprobs needs logprobs: true")
	}
	ctx := r.Context()
	lease, opt, err := s.lease(ctx, &req.samplingFields)
	if err != nil {
		return err
	}
	defer lease.Release()
	e := lease.Engine
	if opt.Constraint, err = req.constraint(e); err != nil {
		return err
	}
	releaseDraft, err := s.drafter(ctx, req.draftFields, e, &opt)
	if err != nil {
		return err
	}
	defer releaseDraft()
	sp := splitter{tools: len(tools) > 0}
	var ids []int
	if e.Template == nil {
		// A base model: the thread as one running text it continues.
		var b strings.Builder
		for i := range req.Messages {
			t, _ := req.Messages[i].text(i)
			b.WriteString(t)
		}
		ids = e.RawPrompt(b.String())
	} else {
		text, err := e.Template.RenderContext(ctx, chattemplate.Input{Messages: msgs, Tools: tools, AddGenerationPrompt: true, Extra: req.ChatTemplateKwargs})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &Error{Status: 400, Message: "the model's chat template failed on these messages: " + err.Error(), Type: typeInvalid, Param: "messages"}
		}
		// The template opened the reasoning block itself (thinking models
		// whose generation prompt ends with <think>).
		sp.thinking = strings.HasSuffix(strings.TrimRight(text, "\n"), thinkOpen)
		if ids, err = e.Tokenizer.EncodeContext(ctx, text, false); err != nil {
			return ctx.Err()
		}
	}
	if err := checkFits(e, ids); err != nil {
		return err
	}
	if req.TopLogprobs != nil {
		opt.TopLogprobs = *req.TopLogprobs
	}
	j := &job{lease: lease, prompt: ids, opt: opt, logprobs: req.Logprobs, modelName: req.Model, prev: ids[len(ids)-1]}
	if err := s.reserveRow(ctx, j); err != nil {
		return err
	}
	if req.Stream {
		return s.streamChat(w, r, j, sp, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	}
	res, lps, err := s.run(ctx, j, nil)
	if err != nil {
		return err
	}
	p := sp.split(res.Text, true)
	msg := map[string]any{"role": "assistant", "content": p.content}
	finish := finishReason(res.FinishReason)
	if p.reasoning != "" {
		msg["reasoning_content"] = p.reasoning
	}
	if p.toolText != "" {
		calls, err := parseToolCalls(p.toolText)
		if err != nil || len(calls) == 0 {
			// Not a call after all: keep the text, do not lose it.
			msg["content"] = p.content + p.toolText
		} else {
			msg["tool_calls"] = calls
			if p.content == "" {
				msg["content"] = nil
			}
			finish = "tool_calls"
		}
	}
	choice := map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}
	if req.Logprobs {
		choice["logprobs"] = map[string]any{"content": chatLogprobs(j, lps)}
	}
	writeJSON(w, 200, map[string]any{
		"id": "chatcmpl-" + randomID(24), "object": "chat.completion", "created": time.Now().Unix(),
		"model": req.Model, "system_fingerprint": systemFingerprint, "choices": []any{choice}, "usage": usageOf(res.Stats),
	})
	return nil
}

// systemFingerprint names the server build that wrote a reply.
const systemFingerprint = "hark"

// finishReason maps the engine's to OpenAI's.
func finishReason(r string) string {
	if r == engine.FinishLength {
		return "length"
	}
	return "stop"
}

// run generates, collecting logprobs when asked; onText streams. A
// cancelled context (client gone, deadline) is returned as its error.
func (s *server) run(ctx context.Context, j *job, onText func(string, []engine.TokenLogprob) error) (*engine.Result, []engine.TokenLogprob, error) {
	e := j.lease.Engine
	var all, pending []engine.TokenLogprob
	opt := j.opt
	if j.logprobs {
		opt.OnLogprob = func(lp engine.TokenLogprob) {
			for _, id := range e.EOS {
				if lp.Token == id {
					return
				}
			}
			all = append(all, lp)
			pending = append(pending, lp)
		}
	}
	var cb func(string) error
	if onText != nil {
		cb = func(t string) error {
			lps := pending
			pending = nil
			return onText(t, lps)
		}
	}
	res, err := e.GenerateBatched(ctx, j.prompt, opt, cb)
	if err != nil && res == nil {
		// Refused before starting: the options or the prompt.
		return nil, nil, badParam("", "%v", err)
	}
	if err != nil {
		return res, all, err
	}
	if res.FinishReason == engine.FinishCancelled && ctx.Err() != nil {
		return res, all, ctx.Err()
	}
	if onText != nil && len(pending) > 0 {
		if err := onText("", pending); err != nil {
			return res, all, err
		}
	}
	return res, all, nil
}

// logprobEntry is OpenAI's per-token logprob.
type logprobEntry struct {
	Token       string         `json:"token"`
	Logprob     float64        `json:"logprob"`
	Bytes       []int          `json:"bytes"`
	TopLogprobs []logprobEntry `json:"top_logprobs,omitzero"`
}

func chatLogprobs(j *job, lps []engine.TokenLogprob) []logprobEntry {
	out := []logprobEntry{}
	for _, lp := range lps {
		ent := j.entry(lp.Token, lp.Logprob)
		// An empty list, not absent, on the token; absent on alternatives.
		ent.TopLogprobs = make([]logprobEntry, 0, len(lp.Top))
		for _, t := range lp.Top {
			ent.TopLogprobs = append(ent.TopLogprobs, j.entry(t.Token, t.Logprob))
		}
		j.prev = lp.Token
		out = append(out, ent)
	}
	return out
}

func (j *job) entry(tok int, lp float64) logprobEntry {
	s := j.tokenText(tok)
	b := make([]int, len(s))
	for i := range len(s) {
		b[i] = int(s[i])
	}
	return logprobEntry{Token: s, Logprob: lp, Bytes: b}
}

// tokenText is tok's text after the previous token: decoded alone, a
// SentencePiece token would lose its leading space.
func (j *job) tokenText(tok int) string {
	t := j.lease.Engine.Tokenizer
	if j.prev < 0 {
		return t.Decode([]int{tok}, false)
	}
	before := t.Decode([]int{j.prev}, false)
	if both := t.Decode([]int{j.prev, tok}, false); strings.HasPrefix(both, before) {
		return both[len(before):]
	}
	return t.Decode([]int{tok}, false)
}

// streamChat sends the reply as chat.completion.chunk events.
func (s *server) streamChat(w http.ResponseWriter, r *http.Request, j *job, sp splitter, includeUsage bool) error {
	ev, err := newEvents(w)
	if err != nil {
		return err
	}
	id, created := "chatcmpl-"+randomID(24), time.Now().Unix()
	chunk := func(delta map[string]any, finish any, lps []engine.TokenLogprob) error {
		choice := map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}
		if j.logprobs && len(lps) > 0 {
			choice["logprobs"] = map[string]any{"content": chatLogprobs(j, lps)}
		}
		return ev.send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created,
			"model": j.modelName, "system_fingerprint": systemFingerprint, "choices": []any{choice}})
	}
	if err := chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil); err != nil {
		return errStreamed
	}
	var text strings.Builder
	var sent parts
	emit := func(final bool, lps []engine.TokenLogprob) error {
		p := sp.split(text.String(), final)
		delta := map[string]any{}
		if d := p.reasoning[min(len(sent.reasoning), len(p.reasoning)):]; d != "" {
			delta["reasoning_content"] = d
		}
		if d := p.content[min(len(sent.content), len(p.content)):]; d != "" {
			delta["content"] = d
		}
		sent.reasoning, sent.content = max2(sent.reasoning, p.reasoning), max2(sent.content, p.content)
		if len(delta) == 0 && len(lps) == 0 {
			return nil
		}
		return chunk(delta, nil, lps)
	}
	res, _, err := s.run(r.Context(), j, func(t string, lps []engine.TokenLogprob) error {
		text.WriteString(t)
		return emit(false, lps)
	})
	if err != nil {
		if r.Context().Err() == nil {
			ev.send(map[string]any{"error": map[string]any{"message": err.Error(), "type": typeServer}})
		}
		return errStreamed
	}
	if err := emit(true, nil); err != nil {
		return errStreamed
	}
	finish := finishReason(res.FinishReason)
	if p := sp.split(text.String(), true); p.toolText != "" {
		calls, err := parseToolCalls(p.toolText)
		if err == nil && len(calls) > 0 {
			for i := range calls {
				calls[i].Index = &i
			}
			chunk(map[string]any{"tool_calls": calls}, nil, nil)
			finish = "tool_calls"
		} else {
			chunk(map[string]any{"content": p.toolText}, nil, nil)
		}
	}
	chunk(map[string]any{}, finish, nil)
	if includeUsage {
		ev.send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created,
			"model": j.modelName, "system_fingerprint": systemFingerprint, "choices": []any{}, "usage": usageOf(res.Stats)})
	}
	ev.done()
	return errStreamed
}

// max2 is the longer of two strings where one is a prefix of the other.
func max2(a, b string) string {
	if len(b) > len(a) {
		return b
	}
	return a
}

// events writes server-sent events.
type events struct {
	w  http.ResponseWriter
	fl http.Flusher
	rc *http.ResponseController
}

// sendTimeout bounds one event's write: a client that stops reading
// without closing must not hold its model (and the line behind it).
const sendTimeout = 30 * time.Second

func newEvents(w http.ResponseWriter) (*events, error) {
	fl, ok := w.(http.Flusher)
	if !ok {
		return nil, errors.New("streaming is not supported by this connection")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	return &events{w: w, fl: fl, rc: http.NewResponseController(w)}, nil
}

func (e *events) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.rc.SetWriteDeadline(time.Now().Add(sendTimeout)) // unsupported: no bound
	if _, err := fmt.Fprintf(e.w, "data: %s\n\n", b); err != nil {
		return err
	}
	e.fl.Flush()
	return nil
}

func (e *events) done() {
	fmt.Fprint(e.w, "data: [DONE]\n\n")
	e.fl.Flush()
}
