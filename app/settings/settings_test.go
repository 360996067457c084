package settings

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"hark/app/apierr"
	"hark/library/store"
)

// A saved change reaches every follower in the order given, and only then
// the windows; a bad value is a 400 that reaches nobody and keeps the
// stored settings as they were.
func TestSaveAppliesInOrderAndRefusesBadValues(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "hark.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var heard []string
	follow := func(name string) func(store.Settings) {
		return func(st store.Settings) { heard = append(heard, name+":"+st.Theme) }
	}
	s := New(Deps{DB: db, Apply: []func(store.Settings){follow("backend"), follow("runner"), follow("library")},
		Publish: func(topic string, data any) { heard = append(heard, topic+":"+data.(store.Settings).Theme) }})
	ctx := context.Background()
	in, err := s.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in.Theme = "dark"
	out, err := s.Save(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Theme != "dark" {
		t.Fatalf("saved theme %q", out.Theme)
	}
	if got := strings.Join(heard, " "); got != "backend:dark runner:dark library:dark settings:dark" {
		t.Fatalf("heard %q", got)
	}

	heard = nil
	bad := out
	bad.Theme, bad.IdleUnloadMinutes = "light", -5
	_, err = s.Save(ctx, bad)
	if st, _ := apierr.Status(err); st != http.StatusBadRequest || !strings.Contains(err.Error(), "idle unload time") {
		t.Fatalf("bad idle time: status %d, err %v; want a 400 naming it", st, err)
	}
	if len(heard) != 0 {
		t.Fatalf("a refused change reached %q", heard)
	}
	if cur, _ := s.Get(ctx); cur.Theme != "dark" || cur.IdleUnloadMinutes != out.IdleUnloadMinutes {
		t.Fatalf("a refused change was stored: %+v", cur)
	}
}
