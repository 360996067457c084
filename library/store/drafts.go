package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// A reply being written lives only in memory until it is stored, so a
// crash (kill -9, power loss) would lose it. Drafts are the building block
// for keeping it: the writer saves the reply so far under a "generating"
// finish reason, and the next start marks any draft left behind as
// "interrupted", keeping its text.

// Finish reasons of a draft reply.
const (
	FinishGenerating  = "generating"
	FinishInterrupted = "interrupted"
)

// SaveDraft stores the reply so far: it adds the message when m.ID is 0
// and rewrites its content otherwise. Its stats get finishReason
// "generating" unless they say otherwise; the final save (the finished
// reply's real stats) goes through SaveDraft too.
func (db *DB) SaveDraft(ctx context.Context, m Message) (Message, error) {
	stats := map[string]any{}
	if len(m.Stats) > 0 {
		if err := json.Unmarshal(m.Stats, &stats); err != nil {
			return m, fmt.Errorf("draft stats: %w", err)
		}
	}
	if _, ok := stats["finishReason"]; !ok {
		stats["finishReason"] = FinishGenerating
	}
	raw, err := json.Marshal(stats)
	if err != nil {
		return m, err
	}
	m.Stats = raw
	if m.ID == 0 {
		return db.AddMessage(ctx, m)
	}
	now := time.Now().UnixMilli()
	err = db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE messages SET content=?, stats=? WHERE id=? AND conversation_id=?`, m.Content, string(m.Stats), m.ID, m.ConversationID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("message %d is gone", m.ID)
		}
		_, err = tx.ExecContext(ctx, `UPDATE conversations SET updated_at=? WHERE id=?`, now, m.ConversationID)
		return err
	})
	if err != nil {
		return m, fmt.Errorf("save reply in conversation %d: %w", m.ConversationID, classify(err))
	}
	return m, nil
}

// MarkInterrupted marks every draft a crash left "generating" as
// "interrupted", keeping its text, and returns how many it marked. Run it
// at start, before any reply is written.
func (db *DB) MarkInterrupted(ctx context.Context) (int, error) {
	res, err := db.ExecContext(ctx, `UPDATE messages SET stats = json_set(stats, '$.finishReason', ?)
		WHERE role = 'assistant' AND json_valid(stats) AND json_extract(stats, '$.finishReason') = ?`, FinishInterrupted, FinishGenerating)
	if err != nil {
		return 0, fmt.Errorf("mark interrupted replies: %w", classify(err))
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
