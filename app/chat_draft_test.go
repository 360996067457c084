package app

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"hark/library/store"
)

// The reply is stored as a draft from its first token, rewritten at most
// every DraftEvery (not on every token), hidden from the thread while it
// streams, and the finished reply rewrites that same message.
func TestReplyDraftsAreThrottledAndRewritten(t *testing.T) {
	a, _ := chatApp(t, func(cache string) { chatSnapshot(t, cache, "hark-test/stories", storiesModel(t)) })
	s := a.Service
	id := fingerprint("hark-test/stories")
	waitChatModel(t, s, id)
	c, err := s.CreateConversation(NewConversation{Model: id, Sampling: ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(60)}})
	if err != nil {
		t.Fatal(err)
	}
	a.chats.DraftEvery = time.Hour
	type look struct {
		stored, streamed string
		reason           string
		listed           int
	}
	var looks []look
	tokens := 0
	a.chats.TokenHook = func() {
		if tokens++; tokens != 5 && tokens != 30 {
			return
		}
		ms, err := a.DB.Messages(context.Background(), c.ID)
		if err != nil || len(ms) != 2 {
			t.Errorf("at token %d the database holds %d messages (%v)", tokens, len(ms), err)
			return
		}
		var st ChatStats
		json.Unmarshal(ms[1].Stats, &st)
		listed, _ := s.GetMessages(c.ID)
		status, _ := s.ChatStatus()
		looks = append(looks, look{ms[1].Content, status.Text, st.FinishReason, len(listed)})
	}
	ev := subscribeChat(t, a)
	if _, err := s.SendMessage(c.ID, SendRequest{Text: "Once upon a time"}); err != nil {
		t.Fatal(err)
	}
	end := last(ev.reply(c.ID, nil))
	if end.Type != "done" || len(looks) != 2 {
		t.Fatalf("end %+v, looks %+v", end, looks)
	}
	first := looks[0].stored
	for i, l := range looks {
		// With an hour between saves, the draft stays what the first
		// token wrote while the reply grows.
		if l.stored != first || first == "" || len(l.streamed) <= len(first) || l.reason != store.FinishGenerating || l.listed != 1 {
			t.Fatalf("look %d: %+v (first draft %q)", i, l, first)
		}
	}
	ms, err := s.GetMessages(c.ID)
	if err != nil || len(ms) != 2 || ms[1].Content != end.Message.Content || ms[1].ID != end.Message.ID || ms[1].CreatedAt.IsZero() {
		t.Fatalf("thread after the reply: %+v %v; done message %+v", ms, err, end.Message)
	}
	var st ChatStats
	if json.Unmarshal(ms[1].Stats, &st); st.FinishReason == store.FinishGenerating || st.FinishReason == "" || st.Tokens == 0 {
		t.Fatalf("final stats %s", ms[1].Stats)
	}
	if n, _ := a.DB.MarkInterrupted(context.Background()); n != 0 {
		t.Fatalf("a finished reply was left as a draft")
	}
}
