package app

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"hark/engine"
	"hark/library/store"
	"hark/models/chattemplate"
)

// A reply's Qwen3 <tool_call> block is read as a call with a stable id and
// its text without the markup; the user's answer is stored as a tool
// message that the real Qwen3 template renders as a <tool_response>, and
// the reply after it reads exactly that prompt. Unknown or already
// answered calls are refused.
func TestChatToolCallAnswered(t *testing.T) {
	files := qwenChatModel(t)
	const repo = "test/qwen3-random"
	a, _ := chatApp(t, func(cache string) { chatSnapshot(t, cache, repo, files) })
	s := a.Service
	cm := waitChatModel(t, s, fingerprint(repo))
	events := subscribeChat(t, a)
	ctx := context.Background()
	tools := `[{"type":"function","function":{"name":"get_weather","description":"Weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	sampling := ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(3), Think: ptr(false), Tools: tools}
	c, err := s.CreateConversation(NewConversation{Model: cm.ID, Sampling: sampling})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.DB.AddMessage(ctx, store.Message{ConversationID: c.ID, Role: "user", Content: "Weather in Paris?"}); err != nil {
		t.Fatal(err)
	}
	reply := "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	am, err := a.DB.AddMessage(ctx, store.Message{ConversationID: c.ID, Role: "assistant", Content: reply})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := s.GetMessages(c.ID)
	if err != nil || len(msgs) != 2 {
		t.Fatal(msgs, err)
	}
	m := msgs[1]
	if len(m.ToolCalls) != 1 || m.Text != "Let me check." || m.ToolCallError != "" {
		t.Fatalf("reply read as %+v", m)
	}
	call := m.ToolCalls[0]
	if call.Name != "get_weather" || call.Arguments != `{"city": "Paris"}` || call.Answered || !strings.HasSuffix(call.ID, "_0") || !strings.Contains(call.ID, "_"+jsonNumber(am.ID)+"_") {
		t.Fatalf("call %+v", call)
	}

	if _, err := s.AnswerToolCall(c.ID, ToolAnswer{CallID: "call_999_0", Content: "x"}); !isStatus(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "call_999_0") {
		t.Fatalf("unknown call: %v", err)
	}
	res, err := s.AnswerToolCall(c.ID, ToolAnswer{CallID: call.ID, Content: "22 degrees and sunny"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Role != "tool" || res.Message.ToolCallID != call.ID || res.Message.ToolName != "get_weather" {
		t.Fatalf("stored %+v", res.Message)
	}
	end := last(events.reply(c.ID, nil))
	if end.Type != "done" {
		t.Fatalf("reply after the tool result ended with %+v", end)
	}
	if _, err := s.AnswerToolCall(c.ID, ToolAnswer{CallID: call.ID, Content: "again"}); !isStatus(err, http.StatusConflict) {
		t.Fatalf("second answer: %v", err)
	}
	msgs, _ = s.GetMessages(c.ID)
	if len(msgs) != 4 || !msgs[1].ToolCalls[0].Answered || msgs[2].Role != "tool" {
		t.Fatalf("thread %+v", msgs)
	}

	// The prompt of that reply, as the template renders the thread up to
	// the tool message: the tool result is in it, in Qwen3's markup.
	e, err := engine.Load(cm.Path, engine.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	toolList, err := chattemplate.DecodeJSON([]byte(tools))
	if err != nil {
		t.Fatal(err)
	}
	turns := make([]engine.Turn, 3)
	for i := range turns {
		turns[i] = engine.Turn{Role: msgs[i].Role, Content: msgs[i].Content}
	}
	p, err := e.FitPrompt(ctx, "", turns, 0, engine.TemplateVars{Tools: toolList.([]any), Extra: map[string]any{"enable_thinking": false}})
	if err != nil {
		t.Fatal(err)
	}
	text := e.Tokenizer.Decode(p.IDs, false)
	if !strings.Contains(text, "<tool_response>\n22 degrees and sunny\n</tool_response>") || !strings.Contains(text, reply) {
		t.Fatalf("prompt does not carry the call and its result:\n%s", text)
	}
	if end.Stats.PromptTokens != len(p.IDs) {
		t.Fatalf("the reply read %d prompt tokens, the thread with the tool result is %d", end.Stats.PromptTokens, len(p.IDs))
	}
}
