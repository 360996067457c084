package transcription

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"hark/app/apierr"
	"hark/library/store"
)

// The queue lives in memory, so a crash (kill -9, power loss) or a quit
// with files still waiting would lose the batch, and the next start used
// to delete the uploads it had copied. The entries not yet finished are
// kept in the database (store.ReplaceTranscribeQueue), rewritten in one
// transaction whenever one changes state. The next start puts them back
// in the queue as "interrupted", with their audio, for the user to retry
// or clear; only upload copies no entry refers to are removed.

// legacyJournalName is the JSON file older builds kept beside the
// database; the first start of this build imports it once.
const legacyJournalName = "transcribe-queue.json"

// StateInterrupted marks an entry that was queued or running when Hark
// last stopped.
const StateInterrupted = "interrupted"

type journalEntry struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Path     string    `json:"path,omitempty"`
	Src      string    `json:"src"`
	Uploaded bool      `json:"uploaded"`
	Options  Options   `json:"options"`
	State    string    `json:"state"`
	Added    time.Time `json:"added"`
}

// journalLocked stores the unfinished entries when their set or states
// changed since the last write. Callers hold q.mu, so writes go out in
// the order the changes happened.
func (q *Queue) journalLocked() {
	if !q.Owner || q.DB == nil {
		return // a read-only CLI beside the app does not own the queue
	}
	var entries []store.QueueEntry
	var sig strings.Builder
	for _, it := range q.items {
		if it.State != "queued" && it.State != "running" && it.State != StateInterrupted {
			continue
		}
		opts, err := json.Marshal(it.Options)
		if err != nil {
			q.Log.Warn("transcribe queue: options", "id", it.ID, "err", err)
			return
		}
		entries = append(entries, store.QueueEntry{ID: it.ID, Name: it.Name, Path: it.Path, Src: it.src, Uploaded: it.Uploaded, Options: opts, State: it.State, Added: it.Added})
		fmt.Fprintf(&sig, "%s=%s;", it.ID, it.State)
	}
	if sig.String() == q.journaled {
		return
	}
	if err := q.DB.ReplaceTranscribeQueue(context.Background(), entries); err != nil {
		q.Log.Warn("transcribe queue", "err", err)
		return
	}
	q.journaled = sig.String()
}

// importLegacyJournal moves the entries of an older build's journal file
// into the database once, then removes the file. A damaged file is kept
// aside (renamed, never deleted) and reported.
func importLegacyJournal(d *Deps) {
	path := filepath.Join(d.DataDir, legacyJournalName)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	var entries []journalEntry
	if err == nil {
		err = json.Unmarshal(b, &entries)
	}
	if err != nil {
		aside := path + ".damaged"
		os.Rename(path, aside)
		d.Log.Warn("old transcribe queue journal unreadable; kept aside", "file", aside, "err", err)
		return
	}
	ctx := context.Background()
	have, err := d.DB.TranscribeQueue(ctx)
	if err != nil {
		d.Log.Warn("import old transcribe queue journal", "err", err)
		return
	}
	seen := map[string]bool{}
	for _, e := range have {
		seen[e.ID] = true
	}
	for _, e := range entries {
		if seen[e.ID] {
			continue
		}
		opts, _ := json.Marshal(e.Options)
		have = append(have, store.QueueEntry{ID: e.ID, Name: e.Name, Path: e.Path, Src: e.Src, Uploaded: e.Uploaded, Options: opts, State: e.State, Added: e.Added})
	}
	if err := d.DB.ReplaceTranscribeQueue(ctx, have); err != nil {
		d.Log.Warn("import old transcribe queue journal", "err", err)
		return
	}
	os.Remove(path)
	d.Log.Info("imported the old transcribe queue journal into the database", "entries", len(entries))
}

// restoreQueue reads the entries a previous run left unfinished and
// returns them as interrupted queue items.
func restoreQueue(d *Deps) []*Item {
	if d.DB == nil {
		return nil
	}
	importLegacyJournal(d)
	entries, err := d.DB.TranscribeQueue(context.Background())
	if err != nil {
		d.Log.Warn("transcribe queue: cannot read the unfinished entries", "err", err)
		return nil
	}
	var out []*Item
	for _, e := range entries {
		it := &Item{ID: e.ID, Name: e.Name, Path: e.Path, Uploaded: e.Uploaded, Added: e.Added, src: e.Src, ETA: -1, State: StateInterrupted}
		if err := json.Unmarshal(e.Options, &it.Options); err != nil {
			d.Log.Warn("transcribe queue: options of an interrupted entry unreadable; defaults used", "id", e.ID, "err", err)
		}
		it.Error = "Hark stopped before this file was transcribed; its audio is kept. Retry it or clear it."
		if _, err := os.Stat(e.Src); err != nil {
			it.Error = "Hark stopped before this file was transcribed, and the file is no longer there."
		}
		out = append(out, it)
	}
	if len(out) > 0 {
		d.Log.Warn("transcriptions interrupted by the last exit were kept", "count", len(out))
	}
	return out
}

// keptUploads are the upload copies restored entries still need.
func keptUploads(items []*Item) map[string]bool {
	keep := map[string]bool{}
	for _, it := range items {
		if it.Uploaded {
			keep[filepath.Clean(it.src)] = true
		}
	}
	return keep
}

// Retry queues an interrupted, failed or cancelled entry again.
func (q *Queue) Retry(id string) (Item, error) {
	q.mu.Lock()
	it := q.find(id)
	switch {
	case it == nil:
		q.mu.Unlock()
		return Item{}, apierr.NotFound(fmt.Errorf("no queued transcription %q", id))
	case it.State != StateInterrupted && it.State != "failed" && it.State != "cancelled":
		q.mu.Unlock()
		return Item{}, apierr.Conflict(fmt.Errorf("%s is %s; only an interrupted, failed or cancelled file can be retried", it.Name, it.State))
	}
	if err := Precheck(it.src); err != nil {
		q.mu.Unlock()
		return Item{}, apierr.BadRequest(fmt.Errorf("cannot retry %s: %w", it.Name, err))
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
func maxQueueID(items []*Item) int {
	n := 0
	for _, it := range items {
		var k int
		if _, err := fmt.Sscanf(it.ID, "t%d", &k); err == nil && k > n {
			n = k
		}
	}
	return n
}
