package app

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An older build's journal file is imported into the database once and
// removed; its entry comes back interrupted, options and audio kept, and
// is still there after another restart (now from SQLite alone).
func TestLegacyQueueJournalImported(t *testing.T) {
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	data := t.TempDir()
	audioFile := filepath.Join(t.TempDir(), "talk.wav")
	if err := os.WriteFile(audioFile, []byte("RIFF"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The file and its fields as older builds wrote them: the names are
	// theirs, so they are spelled out here rather than taken from the code.
	old := []map[string]any{{"id": "t41", "name": "talk.wav", "path": audioFile, "src": audioFile, "uploaded": false,
		"options": TranscribeOptions{Language: "fr"}, "state": "running", "added": time.UnixMilli(1_700_000_000_000)}}
	b, _ := json.Marshal(old)
	journal := filepath.Join(data, "transcribe-queue.json")
	if err := os.WriteFile(journal, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Its resume file too; a stale one of an entry that did not come back
	// goes with the folder.
	resumeDir := filepath.Join(data, "transcribe-resume")
	os.MkdirAll(resumeDir, 0o755)
	os.WriteFile(filepath.Join(resumeDir, "t41.jsonl"), []byte(`{"src":"x"}`+"\n"+`{"seek":3000}`+"\n"+`{"se`), 0o644)
	os.WriteFile(filepath.Join(resumeDir, "t9.jsonl"), []byte(`{"src":"y"}`+"\n"), 0o644)
	for run := range 2 {
		a, err := New(Options{DataDir: data, Stderr: &syncBuffer{}})
		if err != nil {
			t.Fatal(err)
		}
		q, _ := a.Service.TranscriptionQueue()
		a.Close()
		if len(q) != 1 || q[0].ID != "t41" || q[0].State != StateInterrupted || q[0].Options.Language != "fr" || q[0].Path != audioFile {
			t.Fatalf("run %d: queue %+v; want t41 interrupted, language fr", run, q)
		}
		if _, err := os.Stat(journal); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("run %d: the old journal is still there (%v)", run, err)
		}
		if _, err := os.Stat(resumeDir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("run %d: the old resume folder is still there (%v)", run, err)
		}
		if n, n9 := resumeRows(t, data, "t41"), resumeRows(t, data, "t9"); n != 2 || n9 != 0 {
			t.Fatalf("run %d: %d resume rows for t41 (want 2: the torn line is the end), %d for t9 (want 0)", run, n, n9)
		}
		if _, err := os.Stat(audioFile); err != nil {
			t.Fatalf("run %d: the audio is gone: %v", run, err)
		}
	}
}
