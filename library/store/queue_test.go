package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// The queue survives a reopen of the real file in its order, and a
// replace drops what is no longer given.
func TestTranscribeQueue(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hark.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	added := time.UnixMilli(1_700_000_000_123)
	in := []QueueEntry{
		{ID: "t7", Name: "b.wav", Path: "/x/b.wav", Src: "/x/b.wav", Options: []byte(`{"language":"en"}`), State: "running", Added: added},
		{ID: "t2", Name: "a.mp3", Src: "/data/up/1.mp3", Uploaded: true, State: "queued", Added: added},
	}
	if err := db.ReplaceTranscribeQueue(ctx, in); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.TranscribeQueue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "t7" || got[1].ID != "t2" {
		t.Fatalf("queue %+v; want t7 then t2", got)
	}
	if g := got[0]; g.Path != "/x/b.wav" || g.State != "running" || string(g.Options) != `{"language":"en"}` || !g.Added.Equal(added) || g.Uploaded {
		t.Errorf("t7 = %+v", g)
	}
	if g := got[1]; !g.Uploaded || g.Src != "/data/up/1.mp3" || string(g.Options) != "{}" {
		t.Errorf("t2 = %+v", g)
	}
	if err := db.ReplaceTranscribeQueue(ctx, got[1:]); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.TranscribeQueue(ctx); len(got) != 1 || got[0].ID != "t2" {
		t.Errorf("after replace: %+v; want only t2", got)
	}
	if err := db.ReplaceTranscribeQueue(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.TranscribeQueue(ctx); len(got) != 0 {
		t.Errorf("after clearing: %+v", got)
	}
}
