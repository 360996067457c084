package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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
