package libsvc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"hark/library/store"
)

// start runs a Service on a real SQLite file and an empty HF cache, with a
// publisher that drops every event, as the UI bus does for a stuck reader.
func start(t *testing.T) (*Service, *store.DB, *atomic.Int64) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "hark.db"))
	if err != nil {
		t.Fatal(err)
	}
	getenv := testEnv(t, nil)
	var dropped atomic.Int64
	s, err := Start(Options{DB: db, Getenv: getenv, Publish: func(string, any) { dropped.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		db.Close()
	})
	return s, db, &dropped
}

// testEnv is an environment with an empty HF cache and home of the test's
// own, plus vars.
func testEnv(t *testing.T, vars map[string]string) func(string) string {
	env := map[string]string{"HF_HUB_CACHE": t.TempDir(), "HOME": t.TempDir()}
	for k, v := range vars {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

// modelRoot is a folder holding one Whisper model, org/model.
func modelRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "org", "model")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type":"whisper"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Service) hasRoot(path string) bool {
	for _, r := range s.Library().Roots() {
		if r.Path == path {
			return true
		}
	}
	return false
}

// A model folder added in Settings is scanned, though every event the
// library publishes is dropped: Settings come by ApplySettings.
func TestSettingsReachTheLibraryWithEveryEventDropped(t *testing.T) {
	s, _, dropped := start(t)
	extra := modelRoot(t)
	s.ApplySettings(store.Settings{ModelRoots: []string{extra}})
	waitFor(t, "the model folder from Settings was not scanned", func() bool {
		ms, err := s.Library().List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s.hasRoot(extra) && len(ms) == 1 && ms[0].Repo == "org/model" && ms[0].Kind == "speech"
	})
	if dropped.Load() == 0 {
		t.Fatal("the library published nothing: the test did not drop events")
	}
	// And removed again.
	s.ApplySettings(store.Settings{})
	waitFor(t, "the model folder removed in Settings is still a root", func() bool { return !s.hasRoot(extra) })
}

// A burst of saves applies the last one and never blocks the caller.
func TestApplySettingsKeepsTheLatest(t *testing.T) {
	s, _, _ := start(t)
	first, last := t.TempDir(), t.TempDir()
	done := make(chan struct{})
	go func() {
		for range 50 {
			s.ApplySettings(store.Settings{ModelRoots: []string{first}})
		}
		s.ApplySettings(store.Settings{ModelRoots: []string{last}})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ApplySettings blocked")
	}
	waitFor(t, "the last save was not applied", func() bool { return s.hasRoot(last) && !s.hasRoot(first) })
}

// The saved settings at start are the first roots.
func TestStartUsesTheSavedSettings(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "hark.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	extra := modelRoot(t)
	st, err := db.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st.ModelRoots = []string{extra}
	if err := db.SaveSettings(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	s, err := Start(Options{DB: db, Getenv: testEnv(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.hasRoot(extra) {
		t.Fatalf("roots %+v lack the saved %s", s.Library().Roots(), extra)
	}
}

func TestStartRefusesABadWatchLimit(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "hark.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := Start(Options{DB: db, Getenv: testEnv(t, map[string]string{"HARK_MAX_WATCHES": "lots"})}); err == nil || !strings.Contains(err.Error(), "HARK_MAX_WATCHES") {
		t.Fatalf("err = %v, want one naming HARK_MAX_WATCHES", err)
	}
}
