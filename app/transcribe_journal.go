package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The queue lives in memory, so a crash (kill -9, power loss) or a quit
// with files still waiting would lose the batch, and the next start used
// to delete the uploads it had copied. The journal is a small file beside
// the database that lists the entries not yet finished, rewritten
// (atomically) whenever one changes state. The next start puts them back
// in the queue as "interrupted", with their audio, for the user to retry
// or clear; only upload copies no entry refers to are removed.

const journalName = "transcribe-queue.json"

// StateInterrupted marks an entry that was queued or running when Hark
// last stopped.
const StateInterrupted = "interrupted"

type journalEntry struct {
	ID       string            `json:"id"`
	Name     string            `json:"name"`
	Path     string            `json:"path,omitempty"`
	Src      string            `json:"src"`
	Uploaded bool              `json:"uploaded"`
	Options  TranscribeOptions `json:"options"`
	State    string            `json:"state"`
	Added    time.Time         `json:"added"`
}

func journalPath(a *App) string { return filepath.Join(a.DataDir, journalName) }

// journalLocked rewrites the journal when the set of unfinished entries
// or their states changed since the last write. Callers hold q.mu.
func (q *transcriber) journalLocked() {
	if q.app.lock == nil {
		return // a read-only CLI beside the app does not own the queue
	}
	var entries []journalEntry
	var sig strings.Builder
	for _, it := range q.items {
		if it.State != "queued" && it.State != "running" && it.State != StateInterrupted {
			continue
		}
		entries = append(entries, journalEntry{ID: it.ID, Name: it.Name, Path: it.Path, Src: it.src, Uploaded: it.Uploaded, Options: it.Options, State: it.State, Added: it.Added})
		fmt.Fprintf(&sig, "%s=%s;", it.ID, it.State)
	}
	if sig.String() == q.journaled {
		return
	}
	if err := writeJournal(journalPath(q.app), entries); err != nil {
		q.app.Log.Warn("transcribe queue journal", "err", err)
		return
	}
	q.journaled = sig.String()
}

func writeJournal(path string, entries []journalEntry) error {
	if entries == nil {
		entries = []journalEntry{}
	}
	b, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// restoreQueue reads the journal a previous run left and returns its
// entries as interrupted queue items. A damaged journal is kept aside
// (renamed, never deleted) and reported.
func restoreQueue(a *App) []*QueueItem {
	path := journalPath(a)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var entries []journalEntry
	if err == nil {
		err = json.Unmarshal(b, &entries)
	}
	if err != nil {
		aside := path + ".damaged"
		os.Rename(path, aside)
		a.Log.Warn("transcribe queue journal unreadable; kept aside", "file", aside, "err", err)
		return nil
	}
	var out []*QueueItem
	for _, e := range entries {
		it := &QueueItem{ID: e.ID, Name: e.Name, Path: e.Path, Uploaded: e.Uploaded, Options: e.Options, Added: e.Added, src: e.Src, ETA: -1, State: StateInterrupted}
		it.Error = "Hark stopped before this file was transcribed; its audio is kept. Retry it or clear it."
		if _, err := os.Stat(e.Src); err != nil {
			it.Error = "Hark stopped before this file was transcribed, and the file is no longer there."
		}
		out = append(out, it)
	}
	if len(out) > 0 {
		a.Log.Warn("transcriptions interrupted by the last exit were kept", "count", len(out))
	}
	return out
}

// keptUploads are the upload copies restored entries still need.
func keptUploads(items []*QueueItem) map[string]bool {
	keep := map[string]bool{}
	for _, it := range items {
		if it.Uploaded {
			keep[filepath.Clean(it.src)] = true
		}
	}
	return keep
}

// retry queues an interrupted, failed or cancelled entry again.
func (q *transcriber) retry(id string) (QueueItem, error) {
	q.mu.Lock()
	it := q.find(id)
	switch {
	case it == nil:
		q.mu.Unlock()
		return QueueItem{}, NotFound(fmt.Errorf("no queued transcription %q", id))
	case it.State != StateInterrupted && it.State != "failed" && it.State != "cancelled":
		q.mu.Unlock()
		return QueueItem{}, Conflict(fmt.Errorf("%s is %s; only an interrupted, failed or cancelled file can be retried", it.Name, it.State))
	}
	if err := precheck(it.src); err != nil {
		q.mu.Unlock()
		return QueueItem{}, BadRequest(fmt.Errorf("cannot retry %s: %w", it.Name, err))
	}
	it.State, it.Error, it.Phase, it.Done, it.Total, it.ETA, it.Text, it.JobID = "queued", "", "", 0, 0, -1, "", ""
	q.publishLocked(it)
	snap := *it
	q.mu.Unlock()
	q.poke()
	return snap, nil
}

// maxQueueID is the highest numeric suffix of restored IDs, so new
// entries never reuse one.
func maxQueueID(items []*QueueItem) int {
	n := 0
	for _, it := range items {
		var k int
		if _, err := fmt.Sscanf(it.ID, "t%d", &k); err == nil && k > n {
			n = k
		}
	}
	return n
}
