package chat

import (
	"context"
	"encoding/json"
	"time"

	"hark/library/store"
)

// A reply being written is saved as a draft (store.SaveDraft) while it
// streams, so kill -9 or a power cut keeps what was written: the next start
// marks the draft "interrupted" (store.MarkInterrupted) and the thread
// shows it as such. The first token creates the message; after that it is
// rewritten at most every Service.DraftEvery, so a fast model does not write the
// database on every token. The final reply rewrites the same message.

// defaultDraftEvery is how often a draft is rewritten while a reply
// streams (Service.DraftEvery).
const defaultDraftEvery = 500 * time.Millisecond

// draftState is the draft of one run; only the run's goroutine touches it.
type draftState struct {
	id      int64
	created time.Time // the message's, kept for the final rewrite
	saved   time.Time
	err     error // the first failed save, logged once
}

// saveDraft saves the reply so far when a save is due. Called from the
// token callback.
func (rt *chatRuntime) saveDraft(run *chatRun, c store.Conversation) {
	d := &run.draft
	if d.err != nil || (d.id != 0 && time.Since(d.saved) < rt.s.DraftEvery) {
		return
	}
	rt.mu.Lock()
	text := string(run.text)
	rt.mu.Unlock()
	if text == "" {
		return
	}
	stats, _ := json.Marshal(Stats{Model: c.Model, FinishReason: store.FinishGenerating})
	m, err := rt.s.DB.SaveDraft(context.Background(), store.Message{ID: d.id, ConversationID: c.ID, Role: "assistant", Content: text, Stats: stats})
	if err != nil {
		d.err = err
		rt.s.Log.Warn("chat draft not saved; the reply is kept in memory", "conversation", c.ID, "err", err)
		return
	}
	if d.id == 0 {
		d.created = m.CreatedAt
	}
	d.id, d.saved = m.ID, time.Now()
	rt.mu.Lock()
	run.draftID = m.ID
	rt.mu.Unlock()
}

// withoutRunningDraft drops the draft of the reply being written from a
// thread: the client shows that reply from the status and the stream.
func (rt *chatRuntime) withoutRunningDraft(convID int64, msgs []store.Message) []store.Message {
	rt.mu.Lock()
	var id int64
	if run := rt.runs[convID]; run != nil {
		id = run.draftID
	}
	rt.mu.Unlock()
	if id == 0 {
		return msgs
	}
	out := msgs[:0:0]
	for _, m := range msgs {
		if m.ID != id {
			out = append(out, m)
		}
	}
	return out
}
