package openai

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Markers in a reply, as the model writes them: reasoning (Qwen3,
// DeepSeek-R1 style) and Qwen3's (Hermes-style) tool calls. Llama 3 writes
// a tool call as a bare JSON object, optionally after <|python_tag|>.
const (
	thinkOpen     = "<think>"
	thinkClose    = "</think>"
	toolCallOpen  = "<tool_call>"
	toolCallClose = "</tool_call>"
	pythonTag     = "<|python_tag|>"
)

// splitter divides the reply text into reasoning, content and tool-call
// text as it grows, holding back any tail that may be the start of a
// marker, so that what it has released never changes.
type splitter struct {
	thinking bool // the prompt opened <think>: the reply starts inside it
	tools    bool // tools were offered: look for tool calls
}

// parts is the reply divided.
type parts struct {
	reasoning string
	content   string
	toolText  string // from the first tool call on (Qwen3), or the JSON (Llama 3)
}

// split divides text; final means the reply is complete (nothing held).
func (sp splitter) split(text string, final bool) parts {
	var p parts
	rest := text
	inThink := sp.thinking
	if !inThink {
		trimmed := strings.TrimLeft(rest, " \t\r\n")
		if strings.HasPrefix(trimmed, thinkOpen) {
			inThink, rest = true, trimmed[len(thinkOpen):]
		} else if !final && strings.HasPrefix(thinkOpen, trimmed) {
			return p // may be the start of <think> (or only whitespace yet)
		}
	}
	if inThink {
		i := strings.Index(rest, thinkClose)
		if i < 0 {
			if final {
				p.reasoning = strings.TrimSpace(rest)
			} else {
				// Whitespace is held too: the final text is trimmed.
				p.reasoning = strings.TrimSpace(rest[:len(rest)-heldBack(rest, thinkClose)])
			}
			return p
		}
		p.reasoning = strings.TrimSpace(rest[:i])
		rest = strings.TrimLeft(rest[i+len(thinkClose):], "\n")
	}
	if sp.tools {
		trimmed := strings.TrimLeft(rest, " \t\r\n")
		if strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, pythonTag) {
			// A Llama 3 call is the whole reply: decided at the end.
			if !final {
				return p
			}
			if calls, ok := parseLlamaCall(trimmed); ok && len(calls) > 0 {
				p.toolText = trimmed
				return p
			}
		}
		if i := strings.Index(rest, toolCallOpen); i >= 0 {
			p.content, p.toolText = rest[:i], rest[i:]
			if final {
				p.content = strings.TrimRight(p.content, " \t\r\n")
			}
			return p
		}
		if !final {
			if trimmed == "" || strings.HasPrefix(pythonTag, trimmed) {
				return p
			}
			rest = strings.TrimRight(rest[:len(rest)-heldBack(rest, toolCallOpen)], " \t\r\n")
		}
	}
	p.content = rest
	return p
}

// heldBack is the length of the longest suffix of s that is a proper
// prefix of marker.
func heldBack(s, marker string) int {
	for n := min(len(marker)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, marker[:n]) {
			return n
		}
	}
	return 0
}

// toolCall is OpenAI's tool call.
type toolCall struct {
	Index    *int         `json:"index,omitempty"` // streaming only
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON text
}

// parseToolCalls reads the tool-call text split found: Qwen3's
// <tool_call>{"name", "arguments"}</tool_call> blocks, or Llama 3's JSON.
// A call that is not valid JSON is an error naming it.
func parseToolCalls(text string) ([]toolCall, error) {
	if strings.HasPrefix(text, "{") || strings.HasPrefix(text, pythonTag) {
		calls, ok := parseLlamaCall(text)
		if !ok {
			return nil, fmt.Errorf("the model wrote a tool call that is not valid JSON: %q", text)
		}
		return calls, nil
	}
	var calls []toolCall
	rest := text
	for {
		i := strings.Index(rest, toolCallOpen)
		if i < 0 {
			break
		}
		rest = rest[i+len(toolCallOpen):]
		body := rest
		if j := strings.Index(rest, toolCallClose); j >= 0 {
			body, rest = rest[:j], rest[j+len(toolCallClose):]
		} else {
			rest = ""
		}
		var c struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &c); err != nil || c.Name == "" {
			return calls, fmt.Errorf("the model wrote a tool call that is not valid JSON with a name: %q", strings.TrimSpace(body))
		}
		calls = append(calls, newCall(len(calls), c.Name, c.Arguments))
	}
	return calls, nil
}

// parseLlamaCall reads Llama 3's {"name": ..., "parameters": {...}}
// (one object, or several separated by semicolons).
func parseLlamaCall(text string) ([]toolCall, bool) {
	text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), pythonTag))
	dec := json.NewDecoder(strings.NewReader(text))
	var calls []toolCall
	for {
		var c struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
			Arguments  json.RawMessage `json:"arguments"`
		}
		if err := dec.Decode(&c); err != nil {
			break
		}
		if c.Name == "" {
			return nil, false
		}
		args := c.Parameters
		if args == nil {
			args = c.Arguments
		}
		calls = append(calls, newCall(len(calls), c.Name, args))
		rest := strings.TrimLeft(text[dec.InputOffset():], " \t\r\n;")
		if rest == "" {
			return calls, true
		}
		dec = json.NewDecoder(strings.NewReader(rest))
		text = rest
	}
	return nil, false
}

func newCall(i int, name string, args json.RawMessage) toolCall {
	a := strings.TrimSpace(string(args))
	if a == "" || a == "null" {
		a = "{}"
	}
	// Arguments are a JSON text; a model that wrote them as a string of
	// JSON has it unwrapped.
	var str string
	if json.Unmarshal(args, &str) == nil {
		a = str
	}
	return toolCall{ID: fmt.Sprintf("call_%d_%s", i, randomID(12)), Type: "function", Function: toolFunction{Name: name, Arguments: a}}
}
