package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"hark/library/store"
)

// scriptedDialogs answers the native dialogs the way a user would, and
// records what each was asked.
type scriptedDialogs struct {
	open   []string
	save   string
	asked  [][]FileFilter
	titles []string
	names  []string
	dirs   []string
}

func (d *scriptedDialogs) OpenFiles(title string, filters []FileFilter) ([]string, error) {
	d.titles = append(d.titles, title)
	d.asked = append(d.asked, filters)
	return d.open, nil
}

func (d *scriptedDialogs) SaveFile(title, dir, name string, filters []FileFilter) (string, error) {
	d.titles = append(d.titles, title)
	d.asked = append(d.asked, filters)
	d.dirs = append(d.dirs, dir)
	d.names = append(d.names, name)
	return d.save, nil
}

func TestNativeDialogs(t *testing.T) {
	a, _ := newTestApp(t)
	s := a.Service
	dl := t.TempDir()
	defer func(old func() string) { downloadsDir = old }(downloadsDir)
	downloadsDir = func() string { return dl }

	filters := []FileFilter{{DisplayName: "Audio", Pattern: "*.wav;*.mp3"}}
	if _, err := s.ChooseFiles("Choose audio", filters); statusOf(err) != 400 {
		t.Fatalf("ChooseFiles without a window: %v", err)
	}

	d := &scriptedDialogs{open: []string{"/a/one.wav", "/b/two.mp3"}}
	a.SetDialogs(d)
	got, err := s.ChooseFiles("Choose audio", filters)
	if err != nil || len(got) != 2 || got[1] != "/b/two.mp3" {
		t.Fatalf("ChooseFiles = %v, %v", got, err)
	}
	if fmt.Sprint(d.asked[0]) != fmt.Sprint(filters) || d.titles[0] != "Choose audio" {
		t.Errorf("dialog asked %q with %v", d.titles[0], d.asked[0])
	}
	if _, err := s.ChooseFiles("x", []FileFilter{{DisplayName: "Empty"}}); statusOf(err) != 400 {
		t.Errorf("empty pattern: %v", err)
	}

	// Save: the dialog offers Downloads and the export's name; the file
	// goes where the user chose, replacing what the dialog agreed to.
	c, err := s.CreateConversation(NewConversation{Title: "Plans"})
	if err != nil {
		t.Fatal(err)
	}
	a.DB.AddMessage(context.Background(), store.Message{ConversationID: c.ID, Role: "user", Content: "What is left?"})
	d.save = filepath.Join(t.TempDir(), "chosen.md")
	os.WriteFile(d.save, []byte("old"), 0o644)
	p, err := s.SaveConversationExport(c.ID)
	if err != nil || p != d.save {
		t.Fatalf("save = %q, %v", p, err)
	}
	b, _ := os.ReadFile(p)
	want, _ := s.ExportConversation(c.ID)
	if string(b) != want {
		t.Errorf("saved %q, want %q", b, want)
	}
	if d.names[0] != "Plans.md" || d.dirs[0] != dl || fmt.Sprint(d.asked[1]) != "[{Markdown *.md}]" {
		t.Errorf("save dialog offered %q in %q with %v", d.names[0], d.dirs[0], d.asked[1])
	}

	segs := `[{"id":0,"seek":0,"start":0.5,"end":2.25,"text":" Hello there."}]`
	tr, err := a.DB.SaveTranscript(context.Background(), store.Transcript{SourcePath: "/x/memo.m4a", SourceName: "memo.m4a", Model: "m", Language: "en", Segments: json.RawMessage(segs)})
	if err != nil {
		t.Fatal(err)
	}
	d.save = filepath.Join(t.TempDir(), "memo.vtt")
	if p, err := s.SaveTranscriptExport(tr.ID, "vtt"); err != nil || p != d.save {
		t.Fatalf("transcript save = %q, %v", p, err)
	}
	if b, _ := os.ReadFile(d.save); len(b) == 0 || string(b[:6]) != "WEBVTT" {
		t.Errorf("vtt %q", b)
	}
	if d.names[1] != "memo.vtt" || fmt.Sprint(d.asked[2]) != "[{VTT *.vtt}]" {
		t.Errorf("transcript dialog offered %q with %v", d.names[1], d.asked[2])
	}

	// Cancelled: nothing written, no path, no error; Downloads untouched.
	d.save = ""
	if p, err := s.SaveConversationExport(c.ID); err != nil || p != "" {
		t.Errorf("cancelled save = %q, %v", p, err)
	}
	if ents, _ := os.ReadDir(dl); len(ents) != 0 {
		t.Errorf("cancel wrote into Downloads: %v", ents)
	}
}
