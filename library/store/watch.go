package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// WatchFolder is a folder whose new audio files are transcribed.
type WatchFolder struct {
	ID   int64  `json:"id"`
	Path string `json:"path"`
	// OutputDir receives the transcripts; "" writes them beside the audio.
	OutputDir string `json:"outputDir"`
	// Formats are export formats such as "txt" and "srt".
	Formats []string `json:"formats"`
	// Options are the app's transcription options, stored as given.
	Options   json.RawMessage `json:"options"`
	CreatedAt time.Time       `json:"createdAt"`
}

// WatchExisting marks a file that was in a folder before it was watched.
const WatchExisting = "existing"

// WatchFile is what became of one file of a watch folder.
type WatchFile struct {
	Name     string    `json:"name"`
	Size     int64     `json:"size"`
	ModTime  time.Time `json:"modTime"`
	State    string    `json:"state"` // done, failed, skipped or existing
	Detail   string    `json:"detail,omitempty"`
	Finished time.Time `json:"finished"`
}

// ErrExists is adding what is there already.
var ErrExists = errors.New("already exists")

// AddWatchFolder stores f and returns it with its id; a folder watched
// already is ErrExists.
func (db *DB) AddWatchFolder(ctx context.Context, f WatchFolder) (WatchFolder, error) {
	f.CreatedAt = time.Now()
	f.Options = json.RawMessage(rawOr(f.Options, "{}"))
	res, err := db.ExecContext(ctx, `INSERT INTO watch_folders(path, output_dir, formats, options, created_at) VALUES(?,?,?,?,?)`,
		f.Path, f.OutputDir, strings.Join(f.Formats, ","), string(f.Options), f.CreatedAt.UnixMilli())
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return f, fmt.Errorf("%s is watched already: %w", f.Path, ErrExists)
		}
		return f, fmt.Errorf("add watch folder %s: %w", f.Path, classify(err))
	}
	f.ID, _ = res.LastInsertId()
	return f, nil
}

func scanWatchFolder(row interface{ Scan(...any) error }) (WatchFolder, error) {
	var f WatchFolder
	var formats, opts string
	var created int64
	err := row.Scan(&f.ID, &f.Path, &f.OutputDir, &formats, &opts, &created)
	f.Formats, f.Options, f.CreatedAt = splitList(formats), json.RawMessage(opts), time.UnixMilli(created)
	return f, err
}

func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// WatchFolders lists the watch folders in the order they were added.
func (db *DB) WatchFolders(ctx context.Context) ([]WatchFolder, error) {
	return queryAll(ctx, db, "list watch folders", scanWatchFolder,
		`SELECT id, path, output_dir, formats, options, created_at FROM watch_folders ORDER BY id`)
}

// DeleteWatchFolder stops remembering a folder and what became of its files.
func (db *DB) DeleteWatchFolder(ctx context.Context, id int64) error {
	if _, err := db.ExecContext(ctx, `DELETE FROM watch_files WHERE folder_id=?`, id); err != nil {
		return fmt.Errorf("delete watch folder %d: %w", id, classify(err))
	}
	return db.deleteByID(ctx, "watch_folders", "watch folder", id)
}

// MarkWatchFile records the outcome for a file of folder, replacing an
// earlier one (the same name with new contents).
func (db *DB) MarkWatchFile(ctx context.Context, folder int64, f WatchFile) error {
	if f.Finished.IsZero() {
		f.Finished = time.Now()
	}
	_, err := db.ExecContext(ctx, `INSERT INTO watch_files(folder_id, name, size, mtime_ms, state, detail, finished_at) VALUES(?,?,?,?,?,?,?)
		ON CONFLICT(folder_id, name) DO UPDATE SET size=excluded.size, mtime_ms=excluded.mtime_ms, state=excluded.state, detail=excluded.detail, finished_at=excluded.finished_at`,
		folder, f.Name, f.Size, f.ModTime.UnixMilli(), f.State, f.Detail, f.Finished.UnixMilli())
	if err != nil {
		return fmt.Errorf("remember %s: %w", f.Name, classify(err))
	}
	return nil
}

func scanWatchFile(row interface{ Scan(...any) error }) (WatchFile, error) {
	var f WatchFile
	var mtime, fin int64
	err := row.Scan(&f.Name, &f.Size, &mtime, &f.State, &f.Detail, &fin)
	f.ModTime, f.Finished = time.UnixMilli(mtime), time.UnixMilli(fin)
	return f, err
}

// WatchFile returns the recorded outcome for name in folder, or ErrNotFound.
func (db *DB) WatchFile(ctx context.Context, folder int64, name string) (WatchFile, error) {
	return queryOne(ctx, db, "watched file "+name, scanWatchFile,
		`SELECT name, size, mtime_ms, state, detail, finished_at FROM watch_files WHERE folder_id=? AND name=?`, folder, name)
}

// WatchFiles lists a folder's recorded files, latest first.
func (db *DB) WatchFiles(ctx context.Context, folder int64) ([]WatchFile, error) {
	return queryAll(ctx, db, "list watched files", scanWatchFile,
		`SELECT name, size, mtime_ms, state, detail, finished_at FROM watch_files WHERE folder_id=? ORDER BY finished_at DESC, name`, folder)
}
