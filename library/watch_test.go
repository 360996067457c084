package library

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"hark/library/store"
)

// changes collects OnChange calls so tests can wait for the index.
type changes struct {
	mu sync.Mutex
	n  int
}

func watchLib(t *testing.T, add func(*fsnotify.Watcher, string) error, roots ...string) *Library {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "hark.db"))
	must(t, err)
	t.Cleanup(func() { db.Close() })
	var rs []Root
	for _, r := range roots {
		rs = append(rs, Root{Path: r})
	}
	l := New(Options{DB: db, Roots: rs, Quiet: 50 * time.Millisecond, MaxDelay: 300 * time.Millisecond, PollEvery: 200 * time.Millisecond})
	t.Cleanup(func() { l.Close() })
	if _, err := l.Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	must(t, l.watchWith(add))
	return l
}

// waitFor polls the index until cond holds, failing after a generous
// timeout (the test asserts that it happens, not how fast).
func waitFor(t *testing.T, l *Library, what string, cond func([]Model) bool) []Model {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ms, err := l.List(context.Background())
		must(t, err)
		if cond(ms) {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; index: %+v", what, ms)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWatchHFCache(t *testing.T) {
	root := t.TempDir()
	cfg := []byte(`{"model_type":"llama"}`)
	l := watchLib(t, nil, root)
	if st := l.Status(); !st.Watching || st.Reason != "" {
		t.Fatalf("status %+v", st)
	}

	// A new repo and snapshot appear.
	writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": cfg}, "main")
	waitFor(t, l, "new repo", func(ms []Model) bool {
		return len(ms) == 1 && ms[0].Commit == commitA && len(ms[0].Refs) == 1
	})

	// A download: blob written as .incomplete, then renamed, then linked.
	repoDir := filepath.Join(root, RepoFolder("o/r"))
	st := safetensorsBytes(map[string][]int64{"w": {10, 10}}, "F32")
	blob := sha256Hex(st)
	inc := filepath.Join(repoDir, "blobs", blob+".incomplete")
	unlock, err := lockBlob(context.Background(), root, RepoFolder("o/r"), blob, func() {})
	must(t, err)
	must(t, os.WriteFile(inc, st[:10], 0o644))
	waitFor(t, l, "downloading flag", func(ms []Model) bool { return len(ms) == 1 && ms[0].Downloading })
	unlock()
	f, _ := os.OpenFile(inc, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(st[10:])
	f.Close()
	must(t, os.Rename(inc, filepath.Join(repoDir, "blobs", blob)))
	snapB := filepath.Join(repoDir, "snapshots", commitB)
	must(t, os.MkdirAll(snapB, 0o755))
	must(t, os.Symlink("../../blobs/"+blob, filepath.Join(snapB, "model.safetensors")))
	must(t, os.Symlink("../../blobs/"+gitBlobSHA1(cfg), filepath.Join(snapB, "config.json")))
	// The ref moves to the new commit.
	must(t, os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(commitB), 0o644))
	ms := waitFor(t, l, "second snapshot with main", func(ms []Model) bool {
		for _, m := range ms {
			if m.Commit == commitB && len(m.Refs) == 1 && m.Params == 100 && !m.Downloading {
				return len(ms) == 2
			}
		}
		return false
	})
	for _, m := range ms {
		if m.Commit == commitA && len(m.Refs) != 0 {
			t.Errorf("old snapshot kept ref %v", m.Refs)
		}
	}

	// Deletes.
	must(t, os.RemoveAll(snapB))
	waitFor(t, l, "snapshot delete", func(ms []Model) bool { return len(ms) == 1 })
	must(t, os.RemoveAll(repoDir))
	waitFor(t, l, "repo delete", func(ms []Model) bool { return len(ms) == 0 })

	// A repo copied in as a whole tree (cp -r), nested folders included.
	tmp := t.TempDir()
	writeSnapshot(t, tmp, "o/copied", commitA, map[string][]byte{"config.json": cfg, "a/b/c.json": cfg}, "main")
	must(t, os.Rename(filepath.Join(tmp, RepoFolder("o/copied")), filepath.Join(root, RepoFolder("o/copied"))))
	waitFor(t, l, "moved-in repo", func(ms []Model) bool { return len(ms) == 1 && ms[0].Repo == "o/copied" && ms[0].FileCount == 2 })
	// Folders moved in are watched too: a change deep inside is seen.
	must(t, os.Symlink("../../blobs/"+gitBlobSHA1(cfg), filepath.Join(root, RepoFolder("o/copied"), "snapshots", commitA, "a", "b", "d.json")))
	waitFor(t, l, "file in moved-in folder", func(ms []Model) bool { return len(ms) == 1 && ms[0].FileCount == 3 })
}

func TestWatchDirRoot(t *testing.T) {
	root := t.TempDir()
	l := watchLib(t, nil, root)
	dir := filepath.Join(root, "org", "model")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), safetensorsBytes(map[string][]int64{"w": {3}}, "F16"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type":"llama"}`), 0o644))
	waitFor(t, l, "dir model", func(ms []Model) bool { return len(ms) == 1 && ms[0].Repo == "org/model" && ms[0].Params == 3 })
}

func TestWatchLimitFallsBackToPolling(t *testing.T) {
	root := t.TempDir()
	writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": []byte(`{}`)}, "main")
	calls := 0
	var mu sync.Mutex
	// The OS grants two watches and then runs out, as inotify does at
	// max_user_watches.
	limit := func(w *fsnotify.Watcher, p string) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls > 2 {
			return &os.PathError{Op: "inotify_add_watch", Path: p, Err: syscall.ENOSPC}
		}
		return w.Add(p)
	}
	l := watchLib(t, limit, root)
	st := l.Status()
	if st.Watching || !strings.Contains(st.Reason, "inotify watch limit reached") || !strings.Contains(st.Reason, "rescanning every") {
		t.Fatalf("status %+v", st)
	}
	// Changes in unwatched folders still arrive, through the rescan.
	writeSnapshot(t, root, "o/r", commitB, map[string][]byte{"config.json": []byte(`{"a":1}`)})
	waitFor(t, l, "polled snapshot", func(ms []Model) bool { return len(ms) == 2 })
}

func TestWatchMissingRootAppears(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "hub")
	l := watchLib(t, nil, root)
	if st := l.Status(); !strings.Contains(st.Reason, "does not exist yet") || st.Roots[0].Error == "" {
		t.Fatalf("status %+v", st)
	}
	writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": []byte(`{}`)}, "main")
	waitFor(t, l, "model in late root", func(ms []Model) bool { return len(ms) == 1 })
	deadline := time.Now().Add(5 * time.Second)
	for l.Status().Reason != "" {
		if time.Now().After(deadline) {
			t.Fatalf("status still %+v", l.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMaxWatchesCap(t *testing.T) {
	root := t.TempDir()
	writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": []byte(`{}`)}, "main")
	db, err := store.Open(filepath.Join(t.TempDir(), "hark.db"))
	must(t, err)
	defer db.Close()
	l := New(Options{DB: db, Roots: []Root{{Path: root}}, MaxWatches: 3, PollEvery: 100 * time.Millisecond})
	defer l.Close()
	must(t, l.Watch())
	st := l.Status()
	if st.Watching || st.Reason != "watch limit reached (HARK_MAX_WATCHES=3); rescanning every 100ms" {
		t.Fatalf("status %+v", st)
	}
	writeSnapshot(t, root, "o/r2", commitA, map[string][]byte{"config.json": []byte(`{}`)}, "main")
	waitFor(t, l, "polled repo", func(ms []Model) bool { return len(ms) == 2 })
}
