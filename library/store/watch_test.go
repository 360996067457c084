package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Watch folders and their files survive a reopen of the real file, and a
// file's outcome is replaced, not duplicated.
func TestWatchFolders(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hark.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := db.AddWatchFolder(ctx, WatchFolder{Path: "/in", OutputDir: "/out", Formats: []string{"txt", "srt"}, Options: []byte(`{"language":"en"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddWatchFolder(ctx, WatchFolder{Path: "/in"}); !errors.Is(err, ErrExists) {
		t.Errorf("second add: %v; want ErrExists", err)
	}
	mt := time.UnixMilli(1_700_000_000_123)
	if err := db.MarkWatchFile(ctx, f.ID, WatchFile{Name: "a.wav", Size: 10, ModTime: mt, State: "failed", Detail: "boom"}); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkWatchFile(ctx, f.ID, WatchFile{Name: "a.wav", Size: 12, ModTime: mt, State: "done"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	all, err := db.WatchFolders(ctx)
	if err != nil || len(all) != 1 || all[0].OutputDir != "/out" || !slices.Equal(all[0].Formats, []string{"txt", "srt"}) || string(all[0].Options) != `{"language":"en"}` {
		t.Fatalf("folders after reopen: %+v %v", all, err)
	}
	got, err := db.WatchFile(ctx, f.ID, "a.wav")
	if err != nil || got.State != "done" || got.Size != 12 || !got.ModTime.Equal(mt) || got.Detail != "" {
		t.Fatalf("file: %+v %v", got, err)
	}
	if files, _ := db.WatchFiles(ctx, f.ID); len(files) != 1 {
		t.Errorf("files: %+v", files)
	}
	if _, err := db.WatchFile(ctx, f.ID, "b.wav"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown file: %v", err)
	}
	if err := db.DeleteWatchFolder(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WatchFile(ctx, f.ID, "a.wav"); !errors.Is(err, ErrNotFound) {
		t.Errorf("file outlived its folder: %v", err)
	}
	if err := db.DeleteWatchFolder(ctx, f.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
}
