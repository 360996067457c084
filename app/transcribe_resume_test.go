package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hark/library/store"
	"hark/mlx/mlxtest"
)

// A file Hark quits in the middle of comes back interrupted; retried, it
// resumes from its last saved window and ends with the same transcript an
// uninterrupted run gives, and its resume log is gone.
func TestResumeInterruptedFile(t *testing.T) {
	long := mlxtest.Assets(t, "whisper", "golden", "transcribe", "long65.wav")
	data := t.TempDir()
	log := &syncBuffer{}
	a := lockedSpeechApp(t, data, log)
	items, err := a.Service.EnqueueTranscriptions(EnqueueRequest{Paths: []string{long}, Options: fast})
	if err != nil {
		t.Fatal(err)
	}
	id := items[0].ID
	lines := func() int { return resumeRows(t, data, id) }
	// Header plus one window's checkpoint.
	waitFor(t, 2*time.Minute, "the first window's checkpoint", func() bool { return lines() >= 2 })
	a.Close()
	if lines() < 2 {
		t.Fatal("the resume log did not outlive the quit")
	}

	b := lockedSpeechApp(t, data, log)
	defer b.Close()
	q, _ := b.Service.TranscriptionQueue()
	if len(q) != 1 || q[0].State != StateInterrupted || q[0].ID != id {
		t.Fatalf("after restart: %+v", q)
	}
	if _, err := b.Service.RetryTranscription(id); err != nil {
		t.Fatal(err)
	}
	got := waitFinished(t, b, 3*time.Minute)["long65.wav"]
	if got.State != "done" {
		t.Fatalf("retried entry: %+v", got)
	}
	if !strings.Contains(log.String(), "transcribe: resuming") {
		t.Errorf("the retry did not resume:\n%s", log.String())
	}
	if n := resumeRows(t, data, id); n != 0 {
		t.Errorf("%d resume points left after the entry finished", n)
	}
	resumed, err := b.DB.Transcript(context.Background(), got.TranscriptID)
	if err != nil {
		t.Fatal(err)
	}

	// The same file from the start, for reference.
	if _, err := b.Service.ClearTranscriptionQueue(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Service.EnqueueTranscriptions(EnqueueRequest{Paths: []string{long}, Options: fast}); err != nil {
		t.Fatal(err)
	}
	ref := waitFinished(t, b, 3*time.Minute)["long65.wav"]
	want, err := b.DB.Transcript(context.Background(), ref.TranscriptID)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Text != want.Text || string(resumed.Segments) != string(want.Segments) {
		t.Errorf("resumed transcript differs from an uninterrupted run:\n%s\n%s", resumed.Segments, want.Segments)
	}
}

// resumeRows counts an entry's resume rows (header included), reading the
// data folder's database through a connection of its own, so it also
// works once the app that wrote them has quit.
func resumeRows(t *testing.T, dataDir, id string) int {
	t.Helper()
	db, err := store.Open(filepath.Join(dataDir, "hark.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.TranscribeCheckpoints(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}
