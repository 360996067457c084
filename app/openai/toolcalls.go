package openai

import "strings"

// ToolCall is a tool call found in a stored reply (the chat page's cards).
type ToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON text
}

// ReplyToolCalls finds the tool calls in a finished reply exactly as the
// API does (Qwen3's <tool_call> blocks, Llama 3's JSON; none inside the
// reasoning): it returns the text before them and the calls. A call that
// cannot be read is an error naming it, with the calls before it.
func ReplyToolCalls(text string) (before string, calls []ToolCall, err error) {
	// A prompt that opened <think> leaves a reply with only its close.
	thinking := strings.Contains(text, thinkClose) && !strings.Contains(text, thinkOpen)
	p := splitter{thinking: thinking, tools: true}.split(text, true)
	if p.toolText == "" {
		return text, nil, nil
	}
	found, err := parseToolCalls(p.toolText)
	for _, c := range found {
		calls = append(calls, ToolCall{Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	return strings.TrimRight(text[:len(text)-len(p.toolText)], " \t\r\n"), calls, err
}
