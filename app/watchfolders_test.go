package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"hark/app/watch"
	"hark/library/store"
	"hark/mlx/mlxtest"
)

// syncBuffer is a log sink the test reads while the app writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lockedSpeechApp is speechApp's model in an App that holds its data
// folder's lock (only that instance watches folders), on dataDir.
func lockedSpeechApp(t *testing.T, dataDir string, log *syncBuffer) *App {
	t.Helper()
	if os.Getenv("HF_HUB_CACHE") == "" {
		speechApp(t) // puts the model in a fresh HF cache and sets HF_HUB_CACHE
	}
	a, err := New(Options{DataDir: dataDir, Stderr: log})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Service.RescanModels(); err != nil {
		t.Fatal(err)
	}
	return a
}

// copySlowly writes src to dst in pieces with pauses shorter than the
// settle time, as a slow copy or a download would.
func copySlowly(t *testing.T, src, dst string, pieces int, pause time.Duration) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	step := (len(b) + pieces - 1) / pieces
	for i := 0; i < len(b); i += step {
		if _, err := f.Write(b[i:min(i+step, len(b))]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(pause)
	}
}

// TestWatchFolder drives a watch folder with real fsnotify events on temp
// folders: a file copied in slowly is queued once, after it settles, and
// its transcript is written in the chosen formats; a file that is not
// audio is skipped with the reason logged; files there before the folder
// was added are left alone; and a restart redoes nothing.
func TestWatchFolder(t *testing.T) {
	old := watch.Settle
	watch.Settle = 300 * time.Millisecond
	t.Cleanup(func() { watch.Settle = old })
	jfk := mlxtest.Assets(t, "audio", "jfk.wav")

	data, in, out := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "old.wav"), mustRead(t, jfk), 0o644); err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	a := lockedSpeechApp(t, data, log)
	s := a.Service

	for _, bad := range []WatchFolderRequest{
		{Path: "relative/dir"},
		{Path: filepath.Join(in, "missing")},
		{Path: in, Formats: []string{"docx"}},
		{Path: in, OutputDir: "out"},
	} {
		if _, err := s.AddWatchFolder(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	wf, err := s.AddWatchFolder(WatchFolderRequest{Path: in, OutputDir: out, Formats: []string{"srt", "txt"}, Options: fast})
	if err != nil {
		t.Fatal(err)
	}
	if !wf.Watching {
		t.Fatalf("not watching: %+v", wf)
	}
	if _, err := s.AddWatchFolder(WatchFolderRequest{Path: in}); err == nil || !strings.Contains(err.Error(), "watched already") {
		t.Errorf("second add of one folder: %v", err)
	}

	// 8 pieces 100 ms apart: never still for the 300 ms settle time.
	started := time.Now()
	copySlowly(t, jfk, filepath.Join(in, "talk.wav"), 8, 100*time.Millisecond)
	written := time.Now()
	if err := os.WriteFile(filepath.Join(in, "notes.bin"), []byte("not audio at all, just some words"), 0o644); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 2*time.Minute, "the transcript files", func() bool {
		_, e1 := os.Stat(filepath.Join(out, "talk.srt"))
		_, e2 := os.Stat(filepath.Join(out, "talk.txt"))
		return e1 == nil && e2 == nil
	})
	items, _ := s.TranscriptionQueue()
	var talk []QueueItem
	for _, it := range items {
		if it.Name == "talk.wav" {
			talk = append(talk, it)
		}
		if it.Name == "old.wav" || it.Name == "notes.bin" {
			t.Errorf("%s was queued: %+v", it.Name, it)
		}
	}
	if len(talk) != 1 {
		t.Fatalf("talk.wav queued %d times", len(talk))
	}
	if talk[0].Added.Before(written) {
		t.Errorf("queued %v into a copy that ended %v after it began", talk[0].Added.Sub(started), written.Sub(started))
	}
	srt, _ := os.ReadFile(filepath.Join(out, "talk.srt"))
	if !strings.HasPrefix(string(srt), "1\n00:00:") {
		t.Errorf("srt: %q", srt)
	}
	waitFor(t, 10*time.Second, "the skip to be remembered", func() bool {
		f, err := a.DB.WatchFile(context.Background(), wf.ID, "notes.bin")
		return err == nil && f.State == "skipped"
	})
	if l := log.String(); !strings.Contains(l, "watch folder: skipped") || !strings.Contains(l, "notes.bin") || !strings.Contains(l, "not an audio file") {
		t.Errorf("no reason logged for notes.bin:\n%s", l)
	}
	waitFor(t, 10*time.Second, "talk.wav to be remembered", func() bool {
		f, err := a.DB.WatchFile(context.Background(), wf.ID, "talk.wav")
		return err == nil && f.State == "done"
	})
	list, err := s.WatchFolders()
	if err != nil || len(list) != 1 || len(list[0].Files) != 3 {
		t.Fatalf("list: %+v %v", list, err)
	}
	a.Close()

	// A restart looks at every file again and redoes none.
	log2 := &syncBuffer{}
	b := lockedSpeechApp(t, data, log2)
	defer b.Close()
	waitFor(t, 10*time.Second, "the folder to be watched again", func() bool {
		l, _ := b.Service.WatchFolders()
		return len(l) == 1 && l[0].Watching
	})
	time.Sleep(4 * watch.Settle) // two looks at each file, and then some
	if items, _ := b.Service.TranscriptionQueue(); len(items) != 0 {
		t.Errorf("a restart queued %+v", items)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 2 {
		t.Errorf("output folder after restart: %v", entries)
	}
	if strings.Contains(log2.String(), "watch folder: skipped") {
		t.Errorf("the skipped file was looked at again:\n%s", log2.String())
	}

	// A file that arrives while Hark is running again is transcribed,
	// beside the audio when the folder has no output folder.
	if err := b.Service.RemoveWatchFolder(wf.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.WatchFile(context.Background(), wf.ID, "talk.wav"); err == nil {
		t.Error("removed folder's files still remembered")
	}
	wf2, err := b.Service.AddWatchFolder(WatchFolderRequest{Path: in, Options: fast})
	if err != nil {
		t.Fatal(err)
	}
	copySlowly(t, jfk, filepath.Join(in, "second.wav"), 2, 10*time.Millisecond)
	waitFor(t, 2*time.Minute, "second.txt beside the audio", func() bool {
		_, err := os.Stat(filepath.Join(in, "second.txt"))
		return err == nil
	})
	if items, _ := b.Service.TranscriptionQueue(); len(items) != 1 || items[0].Name != "second.wav" {
		t.Errorf("queue after re-adding the folder: %+v", items)
	}
	f, err := b.DB.WatchFile(context.Background(), wf2.ID, "talk.wav")
	if err != nil || f.State != store.WatchExisting {
		t.Errorf("talk.wav after re-adding: %+v %v", f, err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A watched file Hark quits in the middle of is retried at the next
// start, resuming from its last saved window, and its transcript is
// written once.
func TestWatchFolderResumesAfterQuit(t *testing.T) {
	old := watch.Settle
	watch.Settle = 200 * time.Millisecond
	t.Cleanup(func() { watch.Settle = old })
	long := mlxtest.Assets(t, "whisper", "golden", "transcribe", "long65.wav")
	data, in := t.TempDir(), t.TempDir()
	log := &syncBuffer{}
	a := lockedSpeechApp(t, data, log)
	wf, err := a.Service.AddWatchFolder(WatchFolderRequest{Path: in, Options: fast})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "long.wav"), mustRead(t, long), 0o644); err != nil {
		t.Fatal(err)
	}
	var id string
	waitFor(t, 2*time.Minute, "the first window's checkpoint", func() bool {
		q, _ := a.Service.TranscriptionQueue()
		if len(q) == 1 {
			id = q[0].ID
			return resumeRows(t, data, id) >= 2
		}
		return false
	})
	a.Close()

	b := lockedSpeechApp(t, data, log)
	defer b.Close()
	waitFor(t, 3*time.Minute, "long.txt", func() bool {
		_, err := os.Stat(filepath.Join(in, "long.txt"))
		return err == nil
	})
	q, _ := b.Service.TranscriptionQueue()
	if len(q) != 1 || q[0].ID != id || q[0].State != "done" {
		t.Errorf("queue after the restart: %+v; want the interrupted entry %s retried", q, id)
	}
	if !strings.Contains(log.String(), "transcribe: resuming") {
		t.Error("the watched file was not resumed")
	}
	waitFor(t, 10*time.Second, "long.wav to be remembered", func() bool {
		f, err := b.DB.WatchFile(context.Background(), wf.ID, "long.wav")
		return err == nil && f.State == "done"
	})
	if ents, _ := os.ReadDir(in); len(ents) != 2 {
		t.Errorf("folder: %v; want the audio and one transcript", ents)
	}
}
