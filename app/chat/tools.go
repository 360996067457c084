package chat

import (
	"context"
	"fmt"
	"strings"

	"hark/app/apierr"
	"hark/app/openai"
	"hark/library/store"
)

// Tool calls in the chat: a reply's calls are read by the API's own parser
// (openai.ReplyToolCalls), so the page shows as cards exactly the calls an
// API client would get, and the user answers one with a tool result,
// stored as a "tool" message that the chat template renders (Qwen3's
// <tool_response>, Llama 3's ipython turn) before the next reply.

// Message is a stored message as the chat page reads it.
type Message struct {
	store.Message
	// ToolCalls are the calls the reply made; Text is then the reply
	// without them (the calls show as cards, not as raw markup).
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	Text      string     `json:"text,omitempty"`
	// ToolCallError says why a call in the reply could not be read.
	ToolCallError string `json:"toolCallError,omitempty"`
}

// ToolCall is one call a reply made.
type ToolCall struct {
	ID        string `json:"id"` // call_<message id>_<index>: stable across reads
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON text
	Answered  bool   `json:"answered"`  // a tool message answers it
}

// ToolAnswer is the body of AnswerToolCall: the result of call CallID.
type ToolAnswer struct {
	CallID  string `json:"callId"`
	Content string `json:"content"`
}

// withToolCalls reads the tool calls of the replies in msgs. Only a
// conversation that offers tools has any: elsewhere a reply that is a
// JSON object is just that.
func withToolCalls(msgs []store.Message, tools bool) []Message {
	answered := map[string]bool{}
	for _, m := range msgs {
		if m.Role == "tool" && m.ToolCallID != "" {
			answered[m.ToolCallID] = true
		}
	}
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i].Message = m
		if !tools || m.Role != "assistant" {
			continue
		}
		text, calls, err := openai.ReplyToolCalls(m.Content)
		if err != nil {
			out[i].ToolCallError = err.Error()
		}
		if len(calls) == 0 && err == nil {
			continue
		}
		out[i].Text = text
		for j, c := range calls {
			id := fmt.Sprintf("call_%d_%d", m.ID, j)
			out[i].ToolCalls = append(out[i].ToolCalls, ToolCall{ID: id, Name: c.Name, Arguments: c.Arguments, Answered: answered[id]})
		}
	}
	return out
}

// hasTools reports whether conversation c offers tools to its model.
func hasTools(c store.Conversation) bool { return strings.TrimSpace(samplingOf(c).Tools) != "" }

// AnswerToolCall stores the result of one of the model's tool calls as a
// "tool" message and starts the next reply, which reads it.
func (s *Service) AnswerToolCall(id int64, in ToolAnswer) (SendResult, error) {
	ctx := context.Background()
	rt := s.rt
	c, err := s.claimReply(ctx, id)
	if err != nil {
		return SendResult{}, err
	}
	msgs, err := s.DB.Messages(ctx, id)
	if err != nil {
		rt.release(id)
		return SendResult{}, err
	}
	var call *ToolCall
	for _, m := range withToolCalls(msgs, true) {
		for i := range m.ToolCalls {
			if m.ToolCalls[i].ID == in.CallID {
				call = &m.ToolCalls[i]
			}
		}
	}
	switch {
	case call == nil:
		rt.release(id)
		return SendResult{}, apierr.BadRequest(fmt.Errorf("conversation %d has no tool call %q to answer", id, in.CallID))
	case call.Answered:
		rt.release(id)
		return SendResult{}, apierr.Conflict(fmt.Errorf("tool call %s (%s) is already answered", call.ID, call.Name))
	}
	m, err := s.DB.AddMessage(ctx, store.Message{ConversationID: id, Role: "tool", Content: in.Content, ToolCallID: call.ID, ToolName: call.Name})
	if err != nil {
		rt.release(id)
		return SendResult{}, err
	}
	rt.start(c)
	return SendResult{Conversation: c, Message: m}, nil
}
