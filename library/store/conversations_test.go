package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func openTemp(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "hark.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConversationsAndMessages(t *testing.T) {
	db, ctx := openTemp(t), context.Background()
	c, err := db.CreateConversation(ctx, Conversation{Title: "first", Model: "hf:a/b@1", Sampling: json.RawMessage(`{"temperature":0.7}`)})
	if err != nil || c.ID == 0 {
		t.Fatal(c, err)
	}
	c2, _ := db.CreateConversation(ctx, Conversation{Title: "second"})
	if string(c2.Sampling) != "{}" {
		t.Errorf("default sampling %s", c2.Sampling)
	}
	// Timestamps are in milliseconds; step past the creation's millisecond
	// so the message's touch is strictly newer.
	time.Sleep(3 * time.Millisecond)
	u, _ := db.AddMessage(ctx, Message{ConversationID: c.ID, Role: "user", Content: "hi"})
	db.AddMessage(ctx, Message{ConversationID: c.ID, Role: "assistant", Content: "hello", Stats: json.RawMessage(`{"tokPerSec":12}`)})
	if _, err := db.AddMessage(ctx, Message{ConversationID: c.ID, Role: "wizard", Content: "x"}); err == nil {
		t.Error("bad role accepted")
	}
	if _, err := db.AddMessage(ctx, Message{ConversationID: 9999, Role: "user", Content: "x"}); err == nil {
		t.Error("message for a missing conversation accepted (foreign keys off?)")
	}
	list, _ := db.Conversations(ctx)
	if len(list) != 2 || list[0].ID != c.ID {
		t.Fatalf("order after a message: %+v", list)
	}
	ms, _ := db.Messages(ctx, c.ID)
	if len(ms) != 2 || ms[0].Content != "hi" || ms[1].Role != "assistant" || string(ms[1].Stats) != `{"tokPerSec":12}` {
		t.Fatalf("%+v", ms)
	}
	c.Title, c.SystemPrompt = "renamed", "be brief"
	if got, err := db.UpdateConversation(ctx, c); err != nil || got.Title != "renamed" || got.SystemPrompt != "be brief" {
		t.Fatal(got, err)
	}
	if _, err := db.UpdateConversation(ctx, Conversation{ID: 4242}); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if err := db.DeleteMessagesFrom(ctx, c.ID, u.ID+1); err != nil {
		t.Fatal(err)
	}
	if ms, _ := db.Messages(ctx, c.ID); len(ms) != 1 {
		t.Fatalf("trim left %d", len(ms))
	}
	if err := db.DeleteConversation(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM messages`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d messages left after cascade", n)
	}
	if err := db.DeleteConversation(ctx, c.ID); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}

func TestTranscripts(t *testing.T) {
	db, ctx := openTemp(t), context.Background()
	tr, err := db.SaveTranscript(ctx, Transcript{SourcePath: "/a/jfk.wav", SourceName: "jfk.wav", Model: "m", Duration: 11 * time.Second, Text: "ask not", Segments: json.RawMessage(`[{"start":0,"end":11,"text":"ask not"}]`)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Transcript(ctx, tr.ID)
	if err != nil || got.Duration != 11*time.Second || got.Task != "transcribe" || string(got.Segments) != string(tr.Segments) {
		t.Fatalf("%+v %v", got, err)
	}
	list, _ := db.Transcripts(ctx)
	if len(list) != 1 || list[0].Text != "ask not" {
		t.Fatalf("%+v", list)
	}
	if err := db.DeleteTranscript(ctx, tr.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Transcript(ctx, tr.ID); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}
