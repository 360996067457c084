package transcription

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"hark/engine/transcribe"
	"hark/library/store"
)

// Resume after a crash: while a file is transcribed, the engine's state
// after each window (transcribe.Checkpoint, with that window's segments)
// is added as a row of the database (store.AddTranscribeCheckpoint), so
// segments are saved as they are decoded. When an interrupted entry is
// retried, the rows bring it back to its last saved window instead of the
// start. They are only used for the same file and options (the first row
// says which); they are dropped when the entry finishes in any way but
// Hark quitting. Older builds kept them as files in transcribe-resume/;
// the first start of this build imports those of restored entries once
// and removes the folder.

const resumeDirName = "transcribe-resume"

type resumeHeader struct {
	Src     string  `json:"src"`
	Options Options `json:"options"`
}

// resumeLog adds checkpoints to one entry's rows.
type resumeLog struct {
	db  *store.DB
	log *slog.Logger
	id  string
	err error
}

// openResume returns the entry's log for adding to, and the checkpoint to
// resume from (nil to start at the beginning).
func openResume(d *Deps, id, src string, opt Options) (*resumeLog, *transcribe.Checkpoint, error) {
	head, err := json.Marshal(resumeHeader{Src: src, Options: opt})
	if err != nil {
		return nil, nil, err
	}
	ctx := context.Background()
	rows, err := d.DB.TranscribeCheckpoints(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	cp, err := foldResume(rows, head)
	if err != nil {
		d.Log.Warn("transcribe: resume points unusable; starting over", "id", id, "err", err)
	}
	if cp == nil {
		if err := d.DB.DeleteTranscribeCheckpoints(ctx, id); err != nil {
			return nil, nil, err
		}
		if err := d.DB.AddTranscribeCheckpoint(ctx, id, head); err != nil {
			return nil, nil, err
		}
	}
	return &resumeLog{db: d.DB, log: d.Log, id: id}, cp, nil
}

// foldResume folds an entry's rows into one checkpoint: the last window's
// state with every segment so far.
func foldResume(rows [][]byte, head []byte) (*transcribe.Checkpoint, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	if !bytes.Equal(rows[0], head) {
		return nil, errors.New("they belong to another file or other options")
	}
	var out *transcribe.Checkpoint
	for _, r := range rows[1:] {
		var cp transcribe.Checkpoint
		if err := json.Unmarshal(r, &cp); err != nil {
			return nil, fmt.Errorf("resume point %d: %w", len(rows), err)
		}
		if out != nil {
			cp.Segments = append(out.Segments, cp.Segments...)
		}
		out = &cp
	}
	return out, nil
}

// add saves one window's checkpoint. It returns the first failure only
// (to be logged once); a failure only costs the resume.
func (l *resumeLog) add(cp transcribe.Checkpoint) error {
	if l.err != nil {
		return nil
	}
	b, err := json.Marshal(cp)
	if err == nil {
		err = l.db.AddTranscribeCheckpoint(context.Background(), l.id, b)
	}
	l.err = err
	return err
}

// drop removes the entry's resume points once it needs them no more.
func (l *resumeLog) drop() {
	if err := l.db.DeleteTranscribeCheckpoints(context.Background(), l.id); err != nil {
		l.log.Warn("transcribe: resume points", "id", l.id, "err", err)
	}
}

// resetResume drops the resume points of entries that did not come back,
// after importing an older build's resume files for those that did.
func resetResume(d *Deps, restored []*Item) {
	ids := make([]string, len(restored))
	for i, it := range restored {
		ids[i] = it.ID
	}
	importLegacyResume(d, ids)
	if err := d.DB.KeepTranscribeCheckpoints(context.Background(), ids); err != nil {
		d.Log.Warn("transcribe resume points", "err", err)
	}
}

// importLegacyResume moves the resume files an older build left for ids
// into the database, then removes the folder (the files are Hark's, not
// the user's).
func importLegacyResume(d *Deps, ids []string) {
	dir := filepath.Join(d.DataDir, resumeDirName)
	if _, err := os.Stat(dir); err != nil {
		return
	}
	ctx := context.Background()
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
		if err != nil {
			continue
		}
		if have, _ := d.DB.TranscribeCheckpoints(ctx, id); len(have) > 0 {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
		for sc.Scan() {
			if !json.Valid(sc.Bytes()) {
				break // a line cut short by a crash is the end
			}
			if err := d.DB.AddTranscribeCheckpoint(ctx, id, sc.Bytes()); err != nil {
				d.Log.Warn("import old resume file", "id", id, "err", err)
				return // keep the folder for the next start
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		d.Log.Warn("remove old resume folder", "dir", dir, "err", err)
		return
	}
	d.Log.Info("imported the old transcribe resume files into the database", "dir", dir)
}
