package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A Settings change reaches the library even when the event bus drops
// every event: the bus is for the UI, and a stuck reader loses events
// (Events.Publish never blocks), so the library must not depend on it.
func TestSettingsReachLibraryWhenTheBusDrops(t *testing.T) {
	a, _, _ := libraryApp(t)
	// A subscriber that never reads, filled to the brim: from now on the
	// bus drops everything for it.
	stuck, stop := a.Events.Subscribe()
	defer stop()
	for len(stuck) < cap(stuck) {
		a.Events.Publish("filler", nil)
	}
	// The library's first scan publishes on its own goroutine, so its
	// events may be among the filler; what shows that the bus now drops
	// is a marker published after the fill never arriving.
	a.Events.Publish("marker", nil)
	extra := t.TempDir()
	dir := filepath.Join(extra, "org", "model")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type":"whisper"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := a.Service.GetSettings()
	if err != nil {
		t.Fatal(err)
	}
	in.ModelRoots = []string{extra}
	if _, err := a.Service.SaveSettings(in); err != nil {
		t.Fatal(err)
	}
	// The bus did drop everything after the fill, the settings change's
	// events with it.
	for len(stuck) > 0 {
		if ev := <-stuck; ev.Topic == "marker" {
			t.Fatal("the stuck reader got the marker: the bus was not dropping")
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ms, err := a.Service.ListModels()
		if err != nil {
			t.Fatal(err)
		}
		if hasRoot(a, extra) && len(ms) == 1 && ms[0].Repo == "org/model" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the library did not follow Settings: roots %+v, models %+v", a.library().Roots(), ms)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hasRoot(a *App, path string) bool {
	for _, r := range a.library().Roots() {
		if r.Path == path {
			return true
		}
	}
	return false
}
