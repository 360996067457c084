package engine

import (
	"context"
	"errors"

	"hark/models/chattemplate"
)

// ChatPromptTools is ChatPrompt with tool definitions (JSON-like values,
// as the template's tojson prints them) and template variables.
func (e *Engine) ChatPromptTools(ctx context.Context, msgs []chattemplate.Message, tools []any, extra map[string]any) ([]int, error) {
	if e.Template == nil {
		return nil, errors.New("this model has no chat template (a base model): prompt it raw")
	}
	text, err := e.Template.RenderContext(ctx, chattemplate.Input{Messages: msgs, Tools: tools, AddGenerationPrompt: true, Extra: extra})
	if err != nil {
		return nil, err
	}
	return e.Tokenizer.EncodeContext(ctx, text, false)
}

// SupportsThinking reports whether the chat template has a thinking
// switch (Qwen3's enable_thinking).
func (e *Engine) SupportsThinking() bool {
	return e.Template != nil && e.Template.Mentions("enable_thinking")
}

// SupportsTools reports whether the chat template renders tool
// definitions.
func (e *Engine) SupportsTools() bool {
	return e.Template != nil && e.Template.Mentions("tools")
}
