package app

import (
	"hark/engine"
	"hark/models/nn"
)

// The fit verdicts (app/fit) are computed for the KV cache and context
// chosen: the Library's from Settings, the chat picker's per KV setting
// (chat.Model.Fits), from the figure the runner checks before loading.

// libraryFit is what the Library's verdicts assume: the KV cache and
// context length chosen in Settings.
func (a *App) libraryFit() engine.EstimateOptions {
	st := a.apiSettings()
	return engine.EstimateOptions{KV: nn.KVQuant{Bits: st.KVBits}, Context: st.ContextTokens}
}

// newChatKV is the KV cache a new conversation keeps: Settings' choice.
func (a *App) newChatKV() nn.KVQuant { return nn.KVQuant{Bits: a.apiSettings().KVBits} }
