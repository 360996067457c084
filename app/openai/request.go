package openai

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"hark/engine"
	"hark/engine/grammar"
	"hark/models/chattemplate"
)

// samplingFields are the request fields shared by chat and completions.
// top_k, min_p and repetition_penalty are extensions (llama.cpp, vLLM).
type samplingFields struct {
	Model               string             `json:"model"`
	Stream              bool               `json:"stream"`
	StreamOptions       *streamOptions     `json:"stream_options"`
	Temperature         *float64           `json:"temperature"`
	TopP                *float64           `json:"top_p"`
	Seed                *int64             `json:"seed"`
	PresencePenalty     *float64           `json:"presence_penalty"`
	FrequencyPenalty    *float64           `json:"frequency_penalty"`
	TopK                *int               `json:"top_k"`
	MinP                *float64           `json:"min_p"`
	RepetitionPenalty   *float64           `json:"repetition_penalty"`
	MaxTokens           *int               `json:"max_tokens"`
	MaxCompletionTokens *int               `json:"max_completion_tokens"`
	Stop                stopList           `json:"stop"`
	N                   *int               `json:"n"`
	LogitBias           map[string]float64 `json:"logit_bias"`
	User                string             `json:"user"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// stopList is OpenAI's stop: a string or up to four strings.
type stopList []string

func (s *stopList) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*s = nil
		return nil
	}
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = stopList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return badParam("stop", "stop must be a string or an array of strings")
	}
	*s = many
	return nil
}

// options turns the request onto the model's defaults.
func (f *samplingFields) options(def engine.Sampling) (engine.Options, error) {
	opt := engine.Options{Sampling: def}
	if f.N != nil && *f.N != 1 {
		return opt, badParam("n", "n must be 1: Hark writes one choice per request")
	}
	check := func(name string, v *float64, lo, hi float64, dst *float64) error {
		if v == nil {
			return nil
		}
		if math.IsNaN(*v) || *v < lo || *v > hi {
			return badParam(name, "%s must be between %v and %v, not %v", name, lo, hi, *v)
		}
		*dst = *v
		return nil
	}
	for _, c := range []struct {
		name   string
		v      *float64
		lo, hi float64
		dst    *float64
	}{
		{"temperature", f.Temperature, 0, 2, &opt.Temperature},
		{"top_p", f.TopP, 0, 1, &opt.TopP},
		{"presence_penalty", f.PresencePenalty, -2, 2, &opt.PresencePenalty},
		{"frequency_penalty", f.FrequencyPenalty, -2, 2, &opt.FrequencyPenalty},
		{"min_p", f.MinP, 0, 1, &opt.MinP},
		{"repetition_penalty", f.RepetitionPenalty, 0.01, 10, &opt.RepetitionPenalty},
	} {
		if err := check(c.name, c.v, c.lo, c.hi, c.dst); err != nil {
			return opt, err
		}
	}
	if f.TopK != nil {
		if *f.TopK < 0 {
			return opt, badParam("top_k", "top_k must be >= 0, not %d", *f.TopK)
		}
		opt.TopK = *f.TopK
	}
	if f.Seed != nil {
		seed := uint64(*f.Seed)
		opt.Seed = &seed
	}
	max, param := f.MaxTokens, "max_tokens"
	if f.MaxCompletionTokens != nil {
		max, param = f.MaxCompletionTokens, "max_completion_tokens"
	}
	if max != nil {
		if *max < 1 {
			return opt, badParam(param, "%s must be at least 1, not %d", param, *max)
		}
		opt.MaxTokens = *max
	}
	if len(f.Stop) > 4 {
		return opt, badParam("stop", "stop takes at most 4 strings, not %d", len(f.Stop))
	}
	opt.Stop = f.Stop
	if len(f.LogitBias) > 0 {
		opt.LogitBias = map[int]float64{}
		for k, v := range f.LogitBias {
			id, err := strconv.Atoi(k)
			if err != nil || id < 0 {
				return opt, badParam("logit_bias", "logit_bias keys must be token ids, not %q", k)
			}
			if v < -100 || v > 100 {
				return opt, badParam("logit_bias", "logit_bias values must be between -100 and 100, not %v", v)
			}
			opt.LogitBias[id] = v
		}
	}
	return opt, nil
}

// chatRequest is POST /v1/chat/completions.
type chatRequest struct {
	samplingFields
	Messages       []chatMessage   `json:"messages"`
	Logprobs       bool            `json:"logprobs"`
	TopLogprobs    *int            `json:"top_logprobs"`
	Tools          []tool          `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	// ChatTemplateKwargs are extra template variables (vLLM's extension),
	// e.g. {"enable_thinking": false} for Qwen3.
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs"`
	draftFields                       // Hark's speculative decoding (draft.go)
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []toolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters,omitempty"`
	} `json:"function"`
}

// text reads a message's content: a string, null, or an array of text
// parts; other parts (images, audio) are refused.
func (m chatMessage) text(i int) (string, error) {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 || bytes.Equal(c, []byte("null")) {
		return "", nil
	}
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s, nil
	}
	var ps []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c, &ps); err != nil {
		return "", badParam(fmt.Sprintf("messages[%d].content", i), "messages[%d].content must be a string or an array of text parts", i)
	}
	var b strings.Builder
	for _, p := range ps {
		if p.Type != "text" {
			return "", badParam(fmt.Sprintf("messages[%d].content", i), "messages[%d] has a %q part: Hark's models read text only", i, p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// templateMessages turns the request's messages into the chat template's:
// developer becomes system (templates know no developer role), tool calls'
// arguments become objects (as transformers passes them), tool results
// keep their call id.
func (req *chatRequest) templateMessages() ([]chattemplate.Message, error) {
	if len(req.Messages) == 0 {
		return nil, badParam("messages", "messages must hold at least one message")
	}
	var out []chattemplate.Message
	for i, m := range req.Messages {
		text, err := m.text(i)
		if err != nil {
			return nil, err
		}
		role := m.Role
		switch role {
		case "developer":
			role = "system"
		case "system", "user", "assistant":
		case "tool":
			if m.ToolCallID == "" {
				return nil, badParam(fmt.Sprintf("messages[%d].tool_call_id", i), "messages[%d] has role tool but no tool_call_id", i)
			}
		default:
			return nil, badParam(fmt.Sprintf("messages[%d].role", i), "messages[%d].role %q is not one of system, developer, user, assistant, tool", i, m.Role)
		}
		tm := chattemplate.Message{"role": role, "content": text}
		if m.Name != "" {
			tm["name"] = m.Name
		}
		if m.ToolCallID != "" {
			tm["tool_call_id"] = m.ToolCallID
		}
		if len(m.ToolCalls) > 0 {
			var calls []any
			for _, c := range m.ToolCalls {
				var args any = c.Function.Arguments
				var obj map[string]any
				if json.Unmarshal([]byte(c.Function.Arguments), &obj) == nil {
					args = obj
				}
				calls = append(calls, map[string]any{"id": c.ID, "type": "function",
					"function": map[string]any{"name": c.Function.Name, "arguments": args}})
			}
			tm["tool_calls"] = calls
		}
		out = append(out, tm)
	}
	return out, nil
}

// templateTools are the tools as the chat template reads them, or nil
// when tool_choice is "none". A forced call ("required" or a named
// function) needs constrained decoding, which Hark does not do yet: it is
// refused rather than silently not forced.
func (req *chatRequest) templateTools() ([]any, error) {
	choice := "auto"
	if c := bytes.TrimSpace(req.ToolChoice); len(c) > 0 && !bytes.Equal(c, []byte("null")) {
		if json.Unmarshal(c, &choice) != nil {
			return nil, badParam("tool_choice", "tool_choice naming a function is not supported yet (it needs constrained decoding); use \"auto\" or \"none\"")
		}
	}
	switch choice {
	case "none":
		return nil, nil
	case "auto":
	case "required":
		return nil, badParam("tool_choice", "tool_choice \"required\" is not supported yet (it needs constrained decoding); use \"auto\" or \"none\"")
	default:
		return nil, badParam("tool_choice", "tool_choice must be \"auto\", \"none\" or \"required\", not %q", choice)
	}
	var out []any
	for i, t := range req.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return nil, badParam(fmt.Sprintf("tools[%d]", i), "tools[%d] must be {\"type\": \"function\", \"function\": {\"name\": ...}}", i)
		}
		fn := map[string]any{"name": t.Function.Name}
		if t.Function.Description != "" {
			fn["description"] = t.Function.Description
		}
		if t.Function.Parameters != nil {
			fn["parameters"] = t.Function.Parameters
		}
		out = append(out, map[string]any{"type": "function", "function": fn})
	}
	return out, nil
}

// checkResponseFormat refuses a response_format Hark does not know, or a
// json_schema without its schema, before any model is loaded.
func (req *chatRequest) checkResponseFormat() error {
	rf := req.ResponseFormat
	if rf == nil {
		return nil
	}
	switch rf.Type {
	case "", "text", "json_object":
		return nil
	case "json_schema":
		if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
			return badParam("response_format", "response_format json_schema needs json_schema.schema")
		}
		return nil
	}
	return badParam("response_format", "response_format type %q is not one of text, json_object, json_schema", rf.Type)
}

// constraint is the decoding constraint response_format asks for: any
// JSON object, or a document valid against the schema (engine/grammar),
// enforced token by token. A schema Hark cannot enforce is refused naming
// what it lacks.
func (req *chatRequest) constraint(e *engine.Engine) (engine.Constraint, error) {
	rf := req.ResponseFormat
	if rf == nil {
		return nil, nil
	}
	switch rf.Type {
	case "json_object":
		return grammar.ForJSONObject(e), nil
	case "json_schema":
		st, err := grammar.ForSchema(e, rf.JSONSchema.Schema)
		if err != nil {
			return nil, badParam("response_format", "response_format json_schema: %v", err)
		}
		return st, nil
	}
	return nil, nil
}

func randomID(n int) string {
	b := make([]byte, (n+1)/2)
	rand.Read(b)
	return hex.EncodeToString(b)[:n]
}
