package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The child half of TestDraftSurvivesKill: it writes a user message, then a
// reply draft growing one word per save, printing each committed length.
func init() {
	db := childDB("HARK_DRAFT_CHILD_DB")
	if db == nil {
		return
	}
	ctx := context.Background()
	c, err := db.CreateConversation(ctx, Conversation{Title: "crash"})
	if err == nil {
		_, err = db.AddMessage(ctx, Message{ConversationID: c.ID, Role: "user", Content: "tell me a story"})
	}
	if err != nil {
		fmt.Println("setup:", err)
		os.Exit(4)
	}
	m := Message{ConversationID: c.ID, Role: "assistant", Stats: json.RawMessage(`{"model":"m"}`)}
	for i := 1; ; i++ {
		m.Content += "word" + strconv.Itoa(i) + " "
		if m, err = db.SaveDraft(ctx, m); err != nil {
			fmt.Println("save:", err)
			os.Exit(5)
		}
		fmt.Println(len(m.Content))
	}
}

// kill -9 while a reply is being written: after a restart the user's
// message is there, the reply is kept up to its last save (never half a
// save), and it is marked "interrupted".
func TestDraftSurvivesKill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hark.db")
	last := killChild(t, "HARK_DRAFT_CHILD_DB", path, 2001)

	db, err := Open(path)
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer db.Close()
	ctx := context.Background()
	n, err := db.MarkInterrupted(ctx)
	if err != nil || n != 1 {
		t.Fatalf("marked %d, %v; want the one draft", n, err)
	}
	cs, err := db.Conversations(ctx)
	if err != nil || len(cs) != 1 {
		t.Fatalf("conversations %+v %v", cs, err)
	}
	ms, err := db.Messages(ctx, cs[0].ID)
	if err != nil || len(ms) != 2 || ms[0].Content != "tell me a story" {
		t.Fatalf("messages %+v %v", ms, err)
	}
	reply := ms[1]
	if len(reply.Content) < last || !strings.HasPrefix(reply.Content, "word1 word2 ") || !strings.HasSuffix(reply.Content, " ") {
		t.Fatalf("reply of %d bytes (last acknowledged %d): ...%q", len(reply.Content), last, reply.Content[max(0, len(reply.Content)-20):])
	}
	var st map[string]any
	if json.Unmarshal(reply.Stats, &st); st["finishReason"] != FinishInterrupted || st["model"] != "m" {
		t.Fatalf("stats %s", reply.Stats)
	}
	// A second start has nothing left to mark; a finished reply is never
	// touched.
	if n, _ := db.MarkInterrupted(ctx); n != 0 {
		t.Fatalf("marked %d on the second start", n)
	}
	done, err := db.SaveDraft(ctx, Message{ConversationID: cs[0].ID, Role: "assistant", Content: "fine", Stats: json.RawMessage(`{"finishReason":"stop"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := db.MarkInterrupted(ctx); n != 0 {
		t.Fatalf("a finished reply was marked: %d", n)
	}
	if _, err := db.SaveDraft(ctx, Message{ID: done.ID + 100, ConversationID: cs[0].ID, Role: "assistant", Content: "x"}); err == nil {
		t.Fatal("saving a draft over a missing message succeeded")
	}
}
