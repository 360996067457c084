package store

import (
	"context"
	"path/filepath"
	"strings"
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

// Resume rows come back in order after a reopen, per entry, and the
// ones of entries that did not come back are dropped.
func TestTranscribeCheckpoints(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hark.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ id, body string }{{"t1", "h1"}, {"t2", "h2"}, {"t1", "a"}, {"t1", "b"}, {"t3", "h3"}} {
		if err := db.AddTranscribeCheckpoint(ctx, r.id, []byte(r.body)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if db, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows := func(id string) string {
		b, err := db.TranscribeCheckpoints(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, r := range b {
			s = append(s, string(r))
		}
		return strings.Join(s, ",")
	}
	if got := rows("t1"); got != "h1,a,b" {
		t.Errorf("t1 rows %q; want h1,a,b", got)
	}
	if err := db.KeepTranscribeCheckpoints(ctx, []string{"t1", "t3"}); err != nil {
		t.Fatal(err)
	}
	if got := rows("t2"); got != "" {
		t.Errorf("t2 rows %q after keeping t1 and t3", got)
	}
	if err := db.DeleteTranscribeCheckpoints(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if got, got3 := rows("t1"), rows("t3"); got != "" || got3 != "h3" {
		t.Errorf("after deleting t1: t1 %q, t3 %q", got, got3)
	}
}
