package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// QueueEntry is one unfinished entry of the transcription queue.
type QueueEntry struct {
	ID       string
	Name     string
	Path     string // "" for an upload
	Src      string // the file read: Path, or the upload's copy
	Uploaded bool
	// Options are the app's transcription options, stored as given.
	Options json.RawMessage
	State   string // queued, running or interrupted
	Added   time.Time
}

// ReplaceTranscribeQueue makes entries the whole stored queue, in their
// order, in one transaction: a crash leaves either the old set or the new.
func (db *DB) ReplaceTranscribeQueue(ctx context.Context, entries []QueueEntry) error {
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM transcribe_queue`); err != nil {
			return err
		}
		for i, e := range entries {
			_, err := tx.ExecContext(ctx, `INSERT INTO transcribe_queue(id, name, path, src, uploaded, options, state, added_at, seq) VALUES(?,?,?,?,?,?,?,?,?)`,
				e.ID, e.Name, e.Path, e.Src, e.Uploaded, rawOr(e.Options, "{}"), e.State, e.Added.UnixMilli(), i)
			if err != nil {
				return fmt.Errorf("entry %s (%s): %w", e.ID, e.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save transcription queue: %w", classify(err))
	}
	return nil
}

// TranscribeQueue lists the stored entries in queue order.
func (db *DB) TranscribeQueue(ctx context.Context) ([]QueueEntry, error) {
	return queryAll(ctx, db, "list transcription queue", func(row interface{ Scan(...any) error }) (QueueEntry, error) {
		var e QueueEntry
		var opts string
		var added int64
		err := row.Scan(&e.ID, &e.Name, &e.Path, &e.Src, &e.Uploaded, &opts, &e.State, &added)
		e.Options, e.Added = json.RawMessage(opts), time.UnixMilli(added)
		return e, err
	}, `SELECT id, name, path, src, uploaded, options, state, added_at FROM transcribe_queue ORDER BY seq`)
}

// AddTranscribeCheckpoint appends body to the resume rows of queue entry
// id (the first row is its header).
func (db *DB) AddTranscribeCheckpoint(ctx context.Context, id string, body []byte) error {
	_, err := db.ExecContext(ctx, `INSERT INTO transcribe_checkpoints(queue_id, n, body)
		VALUES(?, (SELECT COALESCE(MAX(n), -1) + 1 FROM transcribe_checkpoints WHERE queue_id = ?), ?)`, id, id, string(body))
	if err != nil {
		return fmt.Errorf("save resume point of %s: %w", id, classify(err))
	}
	return nil
}

// TranscribeCheckpoints are the resume rows of queue entry id, in order.
func (db *DB) TranscribeCheckpoints(ctx context.Context, id string) ([][]byte, error) {
	return queryAll(ctx, db, "resume points of "+id, func(row interface{ Scan(...any) error }) ([]byte, error) {
		var b []byte
		err := row.Scan(&b)
		return b, err
	}, `SELECT body FROM transcribe_checkpoints WHERE queue_id = ? ORDER BY n`, id)
}

// DeleteTranscribeCheckpoints drops the resume rows of queue entry id.
func (db *DB) DeleteTranscribeCheckpoints(ctx context.Context, id string) error {
	if _, err := db.ExecContext(ctx, `DELETE FROM transcribe_checkpoints WHERE queue_id = ?`, id); err != nil {
		return fmt.Errorf("drop resume points of %s: %w", id, classify(err))
	}
	return nil
}

// KeepTranscribeCheckpoints drops the resume rows of every entry not in ids.
func (db *DB) KeepTranscribeCheckpoints(ctx context.Context, ids []string) error {
	err := db.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT queue_id FROM transcribe_checkpoints`)
		if err != nil {
			return err
		}
		var drop []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			if !slices.Contains(ids, id) {
				drop = append(drop, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range drop {
			if _, err := tx.ExecContext(ctx, `DELETE FROM transcribe_checkpoints WHERE queue_id = ?`, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("drop stale resume points: %w", err)
	}
	return nil
}
