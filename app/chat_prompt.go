package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"hark/engine"
	"hark/library"
	"hark/library/store"
	"hark/models/chattemplate"
)

// options merges a conversation's overrides onto the model's defaults.
func (c ChatSampling) options(def engine.Sampling) engine.Options {
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

// replyReserve is how much of the context a prompt must leave for the
// reply: the max tokens setting, else a quarter of the window (at most
// 1024), so a long thread is trimmed before the reply has no room.
func replyReserve(e *engine.Engine, maxTokens int) int {
	ctx := e.Model.Info().MaxContext
	if ctx <= 0 {
		return 0
	}
	if maxTokens > 0 {
		return min(maxTokens, ctx/2)
	}
	return min(1024, ctx/4)
}

type builtPrompt struct {
	ids        []int
	trimmed    int  // oldest messages left out
	completion bool // no chat template: the thread is one running text
}

// buildPrompt turns the thread into token ids that fit the model's context
// with reserve tokens to spare, leaving out the oldest turns (whole
// user+assistant exchanges) when it must. The system prompt and the
// latest message are always kept; if those alone do not fit, the error
// says so.
func buildPrompt(ctx context.Context, e *engine.Engine, system string, msgs []store.Message, reserve int, vars promptVars) (builtPrompt, error) {
	p := builtPrompt{completion: e.Template == nil}
	if len(msgs) == 0 {
		return p, errors.New("nothing to reply to: the conversation is empty")
	}
	maxCtx := e.Model.Info().MaxContext
	for start := 0; ; {
		ids, err := renderThread(ctx, e, system, msgs[start:], vars)
		if err != nil {
			return p, err
		}
		if maxCtx <= 0 || len(ids)+reserve <= maxCtx {
			p.ids, p.trimmed = ids, start
			return p, nil
		}
		next := nextTurn(msgs, start)
		if next < 0 {
			return p, fmt.Errorf("the message is too long for this model: with the system prompt it takes %d tokens, and the model reads at most %d (keeping %d for the reply); shorten it or start a new conversation",
				len(ids), maxCtx, reserve)
		}
		start = next
	}
}

// nextTurn is the index of the first user message after start that still
// leaves the last message in, or -1 when nothing more can be dropped.
func nextTurn(msgs []store.Message, start int) int {
	for i := start + 1; i < len(msgs); i++ {
		if msgs[i].Role == "user" {
			return i
		}
	}
	return -1
}

// renderThread tokenizes msgs: through the chat template, or for a base
// model as one running text (system prompt first) that the reply
// continues, as hark chat --raw does.
func renderThread(ctx context.Context, e *engine.Engine, system string, msgs []store.Message, vars promptVars) ([]int, error) {
	if e.Template == nil {
		var b strings.Builder
		if system != "" {
			b.WriteString(system)
			b.WriteString("\n\n")
		}
		for _, m := range msgs {
			b.WriteString(m.Content)
		}
		return e.RawPrompt(b.String()), nil
	}
	var tm []chattemplate.Message
	if system != "" {
		tm = append(tm, chattemplate.Message{"role": "system", "content": system})
	}
	for _, m := range msgs {
		tm = append(tm, chattemplate.Message{"role": m.Role, "content": m.Content})
	}
	ids, err := e.ChatPromptTools(ctx, tm, vars.tools, vars.extra)
	if err != nil {
		return nil, fmt.Errorf("the model's chat template failed: %w", err)
	}
	return ids, nil
}

func trimNotice(n, ctx int) string {
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("The conversation is longer than this model's %d-token context: the oldest %d message%s were left out of this reply's prompt.", ctx, n, s)
}

func fillStats(st *ChatStats, res *engine.Result) {
	r := res.Stats
	st.FinishReason = res.FinishReason
	st.TTFTMs = float64(r.TimeToFirstToken.Microseconds()) / 1000
	st.PromptTokens, st.ReusedTokens, st.PrefilledTokens = r.PromptTokens, r.ReusedTokens, r.PrefilledTokens
	st.Tokens, st.PromptTPS, st.GenTPS = r.GeneratedTokens, r.PromptTPS, r.GenerationTPS
	st.KVBytes, st.KVBits, st.Drafted, st.Accepted = r.KVCacheBytes, r.KVBits, r.Drafted, r.Accepted
	st.Logprobs = res.Logprobs
}

// ChatModel is a library model the chat page offers.
type ChatModel struct {
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
}

// chatModels lists the supported chat models, complete on disk.
func chatModels(ctx context.Context, lib *library.Library) ([]ChatModel, error) {
	if lib == nil {
		return nil, errors.New("the model library is not running")
	}
	ms, err := lib.List(ctx)
	if err != nil {
		return nil, err
	}
	out := []ChatModel{}
	for _, m := range WithFit(ms, engine.EstimateOptions{}) {
		if m.Kind != "chat" || !m.Supported || m.Incomplete || m.Downloading {
			continue
		}
		cm := ChatModel{ID: m.ID, Name: m.Repo, Path: m.Path, Family: m.Family, Params: m.Params, Quant: m.QuantLabel(), ContextLength: m.ContextLength,
			Commit: m.Commit, Refs: m.Refs, Fit: m.Fit, MemoryNeeded: m.MemoryNeeded}
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
