package store

import (
	"context"
	"testing"
)

// A tool result keeps the call it answers and the tool's name; other
// messages read back with both empty.
func TestToolMessageKeepsItsCall(t *testing.T) {
	db, ctx := openTemp(t), context.Background()
	c, err := db.CreateConversation(ctx, Conversation{Title: "tools"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddMessage(ctx, Message{ConversationID: c.ID, Role: "assistant", Content: `<tool_call>{"name":"f"}</tool_call>`}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddMessage(ctx, Message{ConversationID: c.ID, Role: "tool", Content: "42", ToolCallID: "call_1_0", ToolName: "f"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := db.Messages(ctx, c.ID)
	if err != nil || len(msgs) != 2 {
		t.Fatal(msgs, err)
	}
	if m := msgs[0]; m.ToolCallID != "" || m.ToolName != "" {
		t.Fatalf("assistant message has tool fields %+v", m)
	}
	if m := msgs[1]; m.Role != "tool" || m.Content != "42" || m.ToolCallID != "call_1_0" || m.ToolName != "f" {
		t.Fatalf("tool message %+v", m)
	}
}
