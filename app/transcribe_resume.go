package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"hark/engine/transcribe"
)

// Resume after a crash: while a file is transcribed, the engine's state
// after each window (transcribe.Checkpoint, with that window's segments)
// is appended to a small log per queue entry and synced, so segments are
// saved as they are decoded. When an interrupted entry is retried, the
// log brings it back to its last saved window instead of the start. A log
// is only used for the same file and options; it is removed when the
// entry finishes in any way but Hark quitting.

const resumeDirName = "transcribe-resume"

type resumeHeader struct {
	Src     string            `json:"src"`
	Options TranscribeOptions `json:"options"`
}

func resumePath(a *App, id string) string {
	return filepath.Join(a.DataDir, resumeDirName, id+".jsonl")
}

// resumeLog appends checkpoints to one entry's log.
type resumeLog struct {
	f   *os.File
	err error
}

// openResume returns the entry's log for appending, and the checkpoint to
// resume from (nil to start at the beginning).
func openResume(a *App, id, src string, opt TranscribeOptions) (*resumeLog, *transcribe.Checkpoint, error) {
	path := resumePath(a, id)
	head, err := json.Marshal(resumeHeader{Src: src, Options: opt})
	if err != nil {
		return nil, nil, err
	}
	cp, err := readResume(path, head)
	if err != nil {
		a.Log.Warn("transcribe: resume log unusable; starting over", "path", path, "err", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	var f *os.File
	if cp != nil {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	} else {
		f, err = os.Create(path)
		if err == nil {
			_, err = f.Write(append(head, '\n'))
		}
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, nil, fmt.Errorf("resume log %s: %w", path, err)
	}
	return &resumeLog{f: f}, cp, nil
}

// readResume folds a log into one checkpoint: the last window's state
// with every segment so far. A line cut short by a crash is the end.
func readResume(path string, head []byte) (*transcribe.Checkpoint, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	if !sc.Scan() || !bytes.Equal(sc.Bytes(), head) {
		return nil, errors.New("it belongs to another file or other options")
	}
	var out *transcribe.Checkpoint
	for sc.Scan() {
		var cp transcribe.Checkpoint
		if err := json.Unmarshal(sc.Bytes(), &cp); err != nil {
			break // torn last line
		}
		if out != nil {
			cp.Segments = append(out.Segments, cp.Segments...)
		}
		out = &cp
	}
	return out, nil
}

// add appends one window's checkpoint and syncs it. It returns the
// first failure only (to be logged once); a failure only costs the resume.
func (l *resumeLog) add(cp transcribe.Checkpoint) error {
	if l.err != nil {
		return nil
	}
	b, err := json.Marshal(cp)
	if err == nil {
		_, err = l.f.Write(append(b, '\n'))
	}
	if err == nil {
		err = l.f.Sync()
	}
	l.err = err
	return err
}

func (l *resumeLog) close() { l.f.Close() }

// resetResume removes the logs of entries that did not come back.
func resetResume(a *App, restored []*QueueItem) {
	keep := map[string]bool{}
	for _, it := range restored {
		keep[it.ID+".jsonl"] = true
	}
	dir := filepath.Join(a.DataDir, resumeDirName)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !keep[e.Name()] && strings.HasSuffix(e.Name(), ".jsonl") {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
