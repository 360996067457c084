package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCreateOutputNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "talk.srt")
	if err := os.WriteFile(old, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	// Two inputs named talk.* in one run, with talk.srt already there.
	var names []string
	for range 2 {
		f, err := createOutput(dir, "talk", ".srt", false, written)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(f.Name()))
		f.Close()
	}
	if names[0] != "talk (2).srt" || names[1] != "talk (3).srt" {
		t.Fatalf("names %v", names)
	}
	if b, _ := os.ReadFile(old); string(b) != "keep me" {
		t.Fatalf("talk.srt overwritten: %q", b)
	}
	// --force replaces the old file once, but never an output of this run.
	written = map[string]bool{}
	for i, want := range []string{"talk.srt", "talk (2).srt"} {
		f, err := createOutput(dir, "talk", ".srt", true, written)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f.Name()) != want {
			t.Fatalf("force %d: %s, want %s", i, f.Name(), want)
		}
		f.Close()
	}
}
