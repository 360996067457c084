package app

import (
	"context"

	"hark/app/runner"
	"hark/engine"
	"hark/library"
	"hark/models/nn"
	"hark/models/profile"
)

// memoryBudget is what a model may take now (engine.MemoryBudget, which
// the runner checks too); a variable so tests can set a machine's size.
var memoryBudget = engine.MemoryBudget

// libraryFit is what the Library's verdicts assume: the KV cache and
// context length chosen in Settings.
func (a *App) libraryFit() engine.EstimateOptions {
	st := a.apiSettings()
	return engine.EstimateOptions{KV: nn.KVQuant{Bits: st.KVBits}, Context: st.ContextTokens}
}

// chatKV is the KV cache a conversation's replies keep: its own setting,
// else the engine's default (float32). The runner's load check and the
// chat picker's verdict both use it, so they agree.
func chatKV(c ChatSampling) nn.KVQuant {
	var q nn.KVQuant
	if c.KVBits != nil {
		q.Bits = *c.KVBits
	}
	if c.KVGroup != nil {
		q.Group = *c.KVGroup
	}
	return q
}

// KVFit is a chat model's verdict for one KV setting, at the context the
// chat loads with (the engine's default): from the figure the runner
// checks before loading it (runner.Admission), so the picker and the
// load never disagree.
type KVFit struct {
	KVBits       int    `json:"kvBits"`  // 0: float32
	KVGroup      int    `json:"kvGroup"` // 0: the default group
	Fit          string `json:"fit"`
	MemoryNeeded int64  `json:"memoryNeeded"`
}

// admission is the figure a verdict compares with the budget: what the
// runner counts before it loads m (the estimate, and a chat model's prefix
// cache), so a row that says "fits" is a model the runner will load.
func admission(m *library.Model, e engine.MemoryEstimate) int64 {
	kind := runner.Speech
	if m.Kind == profile.KindChat {
		kind = runner.Chat
	}
	return runner.Admission(kind, e)
}

// kvSettings are the KV caches a conversation can keep, as it states them
// (a nil group is 0 here, the default), so its verdict is found by its
// own setting and the runner estimates the same nn.KVQuant.
func kvSettings() []nn.KVQuant {
	out := []nn.KVQuant{{}}
	for _, b := range nn.KVBitsValues {
		out = append(out, nn.KVQuant{Bits: b})
		for _, g := range nn.KVGroupValues {
			out = append(out, nn.KVQuant{Bits: b, Group: g})
		}
	}
	return out
}

// kvFits gives m's verdict for each KV setting a conversation can choose,
// at the context the chat loads with, so the chat picker shows the one
// for the conversation in view.
func kvFits(m library.Model) []KVFit {
	if !m.Supported || m.Incomplete || m.Kind != profile.KindChat {
		return nil
	}
	var out []KVFit
	for _, q := range kvSettings() {
		f := WithFit([]library.Model{m}, engine.EstimateOptions{KV: q})[0]
		if f.Fit != "" {
			out = append(out, KVFit{KVBits: q.Bits, KVGroup: q.Group, Fit: f.Fit, MemoryNeeded: f.MemoryNeeded})
		}
	}
	return out
}

// newChatKV is the KV cache a new conversation keeps: Settings' choice.
func (a *App) newChatKV() nn.KVQuant { return nn.KVQuant{Bits: a.apiSettings().KVBits} }

// chatFit is m's verdict for a conversation that keeps kv.
func chatFit(m ChatModel, kv nn.KVQuant) string {
	for _, f := range m.Fits {
		if f.KVBits == kv.Bits && f.KVGroup == kv.Group {
			return f.Fit
		}
	}
	return m.Fit
}

// withDefaultKV gives a new conversation that does not choose its KV
// cache the one Settings chose for new chats.
func (a *App) withDefaultKV(ctx context.Context, c *ChatSampling) {
	if c.KVBits != nil {
		return
	}
	if st, err := a.DB.Settings(ctx); err == nil && st.KVBits != 0 {
		bits := st.KVBits
		c.KVBits = &bits
	}
}
