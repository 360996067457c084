package chat

import (
	"context"
	"errors"
	"fmt"

	"hark/app/fit"
	"hark/engine"
	"hark/library"
	"hark/library/store"
	"hark/models/chattemplate"
)

// options merges a conversation's overrides onto the model's defaults.
func (c Sampling) options(def engine.Sampling) engine.Options {
	opt := engine.Options{Sampling: def}
	set := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&opt.Temperature, c.Temperature)
	set(&opt.TopP, c.TopP)
	set(&opt.MinP, c.MinP)
	set(&opt.RepetitionPenalty, c.RepetitionPenalty)
	set(&opt.PresencePenalty, c.PresencePenalty)
	set(&opt.FrequencyPenalty, c.FrequencyPenalty)
	if c.TopK != nil {
		opt.TopK = *c.TopK
	}
	if c.MaxTokens != nil {
		opt.MaxTokens = *c.MaxTokens
	}
	if c.Seed != nil {
		seed := *c.Seed
		opt.Seed = &seed
	}
	c.engineOptions(&opt)
	c.applyControls(&opt)
	return opt
}

// replyReserve is the engine's ReplyReserve (prompt fitting lives in the
// engine).
func replyReserve(e *engine.Engine, maxTokens int) int { return e.ReplyReserve(maxTokens) }

type builtPrompt struct {
	ids        []int
	trimmed    int  // oldest messages left out
	completion bool // no chat template: the thread is one running text
}

// buildPrompt fits the thread to the model's context (engine.FitPrompt),
// with the template variables the conversation's controls set.
func buildPrompt(ctx context.Context, e *engine.Engine, system string, msgs []store.Message, reserve int, vars promptVars) (builtPrompt, error) {
	turns := make([]engine.Turn, len(msgs))
	for i, m := range msgs {
		turns[i] = engine.Turn{Role: m.Role, Content: m.Content}
	}
	f, err := e.FitPrompt(ctx, system, turns, reserve, engine.TemplateVars{Tools: vars.tools, Extra: vars.extra})
	return builtPrompt{ids: f.IDs, trimmed: f.Trimmed, completion: f.Completion}, err
}

func trimNotice(n, ctx int) string {
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("The conversation is longer than this model's %d-token context: the oldest %d message%s were left out of this reply's prompt.", ctx, n, s)
}

func fillStats(st *Stats, res *engine.Result) {
	r := res.Stats
	st.FinishReason = res.FinishReason
	st.TTFTMs = float64(r.TimeToFirstToken.Microseconds()) / 1000
	st.PromptTokens, st.ReusedTokens, st.PrefilledTokens = r.PromptTokens, r.ReusedTokens, r.PrefilledTokens
	st.Tokens, st.PromptTPS, st.GenTPS = r.GeneratedTokens, r.PromptTPS, r.GenerationTPS
	st.KVBytes, st.KVBits, st.Drafted, st.Accepted = r.KVCacheBytes, r.KVBits, r.Drafted, r.Accepted
	st.Logprobs = res.Logprobs
}

// Model is a library model the chat page offers.
type Model struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Path          string `json:"path"`
	Family        string `json:"family,omitempty"`
	Params        int64  `json:"params"`
	Quant         string `json:"quant,omitempty"`
	ContextLength int    `json:"contextLength,omitempty"`
	// Completion means the model has no chat template (a base model): it
	// continues the text rather than answering turns.
	Completion bool   `json:"completion"`
	Problem    string `json:"problem,omitempty"` // e.g. a broken chat template
	// Commit and Refs tell snapshots of one repo apart in the picker.
	Commit string   `json:"commit,omitempty"`
	Refs   []string `json:"refs,omitempty"`
	// Fit and MemoryNeeded say, before Send, whether it will load here.
	Fit          string `json:"fit,omitempty"`
	MemoryNeeded int64  `json:"memoryNeeded,omitempty"`
	// Fits is the verdict per KV setting (fit.Cache.KVFits): the picker
	// shows the one for the conversation's.
	Fits []fit.KVFit `json:"fits,omitempty"`
}

// chatModels lists the supported chat models, complete on disk.
func (s *Service) chatModels(ctx context.Context) ([]Model, error) {
	lib := s.Library
	if lib == nil {
		return nil, errors.New("the model library is not running")
	}
	ms, err := lib.List(ctx)
	if err != nil {
		return nil, err
	}
	out := []Model{}
	for _, m := range s.fit(ms) {
		if m.Kind != "chat" || !m.Supported || m.Incomplete || m.Downloading {
			continue
		}
		cm := Model{ID: m.ID, Name: m.Repo, Path: m.Path, Family: m.Family, Params: m.Params, Quant: m.QuantLabel(), ContextLength: m.ContextLength,
			Commit: m.Commit, Refs: m.Refs, Fit: m.Fit, MemoryNeeded: m.MemoryNeeded, Fits: s.kvFits(m)}
		if cm.Name == "" {
			cm.Name = m.ID
		}
		// Parsing the template is cheap and tells the page whether the
		// model chats or completes before it is loaded.
		_, terr := chattemplate.FromTokenizerConfig(m.Path)
		switch {
		case errors.Is(terr, chattemplate.ErrNoTemplate):
			cm.Completion = true
		case terr != nil:
			cm.Problem = "chat template: " + terr.Error()
		}
		out = append(out, cm)
	}
	return out, nil
}

// fit marks ms with whether each fits in memory, when wiring gave the
// App's estimates.
func (s *Service) fit(ms []library.Model) []library.Model {
	if s.Fits == nil {
		return ms
	}
	return s.Fits.Apply(ms, engine.EstimateOptions{})
}

// kvFits is m's verdict per KV setting, when wiring gave the estimates.
func (s *Service) kvFits(m library.Model) []fit.KVFit {
	if s.Fits == nil {
		return nil
	}
	return s.Fits.KVFits(m)
}
