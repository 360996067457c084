package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"hark/models/chattemplate"
)

// Turn is one message of a conversation: role user or assistant.
type Turn struct {
	Role    string
	Content string
}

// TemplateVars are what a chat template reads besides the messages: tool
// definitions, and extra variables such as Qwen3's enable_thinking.
type TemplateVars struct {
	Tools []any
	Extra map[string]any
}

// Fitted is a conversation's prompt that fits the context.
type Fitted struct {
	IDs []int
	// Trimmed is how many of the oldest turns were left out.
	Trimmed int
	// Completion: no chat template, the thread is one running text.
	Completion bool
}

// ReplyReserve is how much of the context a prompt must leave for the
// reply: maxTokens when set (at most half the window), else a quarter of
// the window (at most 1024), so a long thread is trimmed before the reply
// has no room.
func (e *Engine) ReplyReserve(maxTokens int) int {
	ctx := e.Model.Info().MaxContext
	if ctx <= 0 {
		return 0
	}
	if maxTokens > 0 {
		return min(maxTokens, ctx/2)
	}
	return min(1024, ctx/4)
}

// FitPrompt turns a conversation into token ids that fit the model's
// context with reserve tokens to spare, leaving out the oldest turns
// (whole user+assistant exchanges) when it must. The system prompt and
// the latest turn are always kept; if those alone do not fit, the error
// says so.
func (e *Engine) FitPrompt(ctx context.Context, system string, turns []Turn, reserve int, vars TemplateVars) (Fitted, error) {
	p := Fitted{Completion: e.Template == nil}
	if len(turns) == 0 {
		return p, errors.New("nothing to reply to: the conversation is empty")
	}
	maxCtx := e.Model.Info().MaxContext
	for start := 0; ; {
		ids, err := e.renderTurns(ctx, system, turns[start:], vars)
		if err != nil {
			return p, err
		}
		if maxCtx <= 0 || len(ids)+reserve <= maxCtx {
			p.IDs, p.Trimmed = ids, start
			return p, nil
		}
		next := nextUserTurn(turns, start)
		if next < 0 {
			return p, fmt.Errorf("the message is too long for this model: with the system prompt it takes %d tokens, and the model reads at most %d (keeping %d for the reply); shorten it or start a new conversation",
				len(ids), maxCtx, reserve)
		}
		start = next
	}
}

// nextUserTurn is the index of the first user turn after start that still
// leaves the last turn in, or -1 when nothing more can be dropped.
func nextUserTurn(turns []Turn, start int) int {
	for i := start + 1; i < len(turns); i++ {
		if turns[i].Role == "user" {
			return i
		}
	}
	return -1
}

// renderTurns tokenizes turns: through the chat template, or for a base
// model as one running text (system prompt first) that the reply
// continues, as hark chat --raw does.
func (e *Engine) renderTurns(ctx context.Context, system string, turns []Turn, vars TemplateVars) ([]int, error) {
	if e.Template == nil {
		var b strings.Builder
		if system != "" {
			b.WriteString(system)
			b.WriteString("\n\n")
		}
		for _, t := range turns {
			b.WriteString(t.Content)
		}
		return e.RawPrompt(b.String()), nil
	}
	var tm []chattemplate.Message
	if system != "" {
		tm = append(tm, chattemplate.Message{"role": "system", "content": system})
	}
	for _, t := range turns {
		tm = append(tm, chattemplate.Message{"role": t.Role, "content": t.Content})
	}
	ids, err := e.ChatPromptTools(ctx, tm, vars.Tools, vars.Extra)
	if err != nil {
		return nil, fmt.Errorf("the model's chat template failed: %w", err)
	}
	return ids, nil
}
