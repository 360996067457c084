package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Transcript is a finished transcription with its segments as JSON.
type Transcript struct {
	ID         int64           `json:"id"`
	SourcePath string          `json:"sourcePath"`
	SourceName string          `json:"sourceName"`
	Model      string          `json:"model"`
	Language   string          `json:"language"`
	Task       string          `json:"task"`
	Duration   time.Duration   `json:"durationNs"`
	Text       string          `json:"text"`
	Segments   json.RawMessage `json:"segments"`
	CreatedAt  time.Time       `json:"createdAt"`
}

// SaveTranscript inserts t and returns it with its id.
func (db *DB) SaveTranscript(ctx context.Context, t Transcript) (Transcript, error) {
	t.CreatedAt = time.Now()
	if t.Task == "" {
		t.Task = "transcribe"
	}
	t.Segments = json.RawMessage(rawOr(t.Segments, "[]"))
	res, err := db.ExecContext(ctx, `INSERT INTO transcripts(source_path, source_name, model, language, task, duration_ms, text, segments, created_at) VALUES(?,?,?,?,?,?,?,?,?)`,
		t.SourcePath, t.SourceName, t.Model, t.Language, t.Task, t.Duration.Milliseconds(), t.Text, string(t.Segments), t.CreatedAt.UnixMilli())
	if err != nil {
		return t, fmt.Errorf("save transcript of %s: %w", t.SourceName, classify(err))
	}
	t.ID, _ = res.LastInsertId()
	return t, nil
}

const transcriptCols = `id, source_path, source_name, model, language, task, duration_ms, text, segments, created_at`

func scanTranscript(row interface{ Scan(...any) error }) (Transcript, error) {
	var t Transcript
	var dur, created int64
	var segs string
	err := row.Scan(&t.ID, &t.SourcePath, &t.SourceName, &t.Model, &t.Language, &t.Task, &dur, &t.Text, &segs, &created)
	t.Duration, t.Segments, t.CreatedAt = time.Duration(dur)*time.Millisecond, json.RawMessage(segs), time.UnixMilli(created)
	return t, err
}

// Transcript returns one transcript.
func (db *DB) Transcript(ctx context.Context, id int64) (Transcript, error) {
	return queryOne(ctx, db, fmt.Sprintf("transcript %d", id), scanTranscript, `SELECT `+transcriptCols+` FROM transcripts WHERE id=?`, id)
}

// Transcripts lists transcripts, newest first, without their segments.
func (db *DB) Transcripts(ctx context.Context) ([]Transcript, error) {
	return queryAll(ctx, db, "list transcripts", scanTranscript,
		`SELECT id, source_path, source_name, model, language, task, duration_ms, text, '[]', created_at FROM transcripts ORDER BY created_at DESC, id DESC`)
}

// DeleteTranscript removes one transcript.
func (db *DB) DeleteTranscript(ctx context.Context, id int64) error {
	return db.deleteByID(ctx, "transcripts", "transcript", id)
}
