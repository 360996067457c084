package app

import (
	"testing"
	"time"
)

// A reply asked for in a second conversation while the first is being
// written waits for the model (the runner's line) instead of a 409, and
// both finish with what each would write alone.
func TestChatSecondConversationWaitsItsTurn(t *testing.T) {
	a, _, cm := storiesChat(t)
	s := a.Service
	events := subscribeChat(t, a)
	sampling := ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(200)}
	var ids [2]int64
	for i := range ids {
		c, err := s.CreateConversation(NewConversation{Model: cm.ID, Sampling: sampling})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = c.ID
	}
	for _, id := range ids {
		if _, err := s.SendMessage(id, SendRequest{Text: "Once upon a time"}); err != nil {
			t.Fatalf("conversation %d: %v", id, err)
		}
	}
	done := map[int64]ChatEvent{}
	timeout := time.After(60 * time.Second)
	for len(done) < 2 {
		select {
		case ev := <-events.ch:
			if ce, ok := ev.Data.(ChatEvent); ok && ev.Topic == "chat" && (ce.Type == "done" || ce.Type == "error") {
				done[ce.ConversationID] = ce
			}
		case <-timeout:
			t.Fatalf("replies did not finish: %+v", done)
		}
	}
	a0, a1 := done[ids[0]], done[ids[1]]
	if a0.Type != "done" || a1.Type != "done" || a0.Message.Content == "" || a0.Message.Content != a1.Message.Content {
		t.Fatalf("replies %+v / %+v", a0, a1)
	}
	if st, _ := s.ChatStatus(); st.Generating {
		t.Fatalf("still generating: %+v", st)
	}
}
