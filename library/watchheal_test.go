package library

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"hark/library/store"
)

// kernelWatches counts the inotify watches this process holds, from
// /proc/self/fdinfo: what the kernel says, not what the watcher believes.
func kernelWatches(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("counting kernel watches needs Linux's /proc")
	}
	fds, err := os.ReadDir("/proc/self/fd")
	must(t, err)
	n := 0
	for _, fd := range fds {
		if link, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); link != "anon_inode:inotify" {
			continue
		}
		f, err := os.Open(filepath.Join("/proc/self/fdinfo", fd.Name()))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "inotify wd:") {
				n++
			}
		}
		f.Close()
	}
	return n
}

func waitStatus(t *testing.T, l *Library, what string, cond func(Status) bool) Status {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := l.Status()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; status %+v", what, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The HF cache folder deleted and made again (issue 17: the watcher then
// held 0 watches, said watching: true, and never saw a new model).
func TestWatchRootReplaced(t *testing.T) {
	cfg := []byte(`{"model_type":"llama"}`)
	for _, pollEvery := range []time.Duration{200 * time.Millisecond, time.Hour} {
		t.Run(fmt.Sprint("poll ", pollEvery), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "hub")
			writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": cfg}, "main")
			db, err := store.Open(filepath.Join(t.TempDir(), "hark.db"))
			must(t, err)
			defer db.Close()
			l := New(Options{DB: db, Roots: []Root{{Path: root}}, Quiet: 50 * time.Millisecond, MaxDelay: 300 * time.Millisecond, PollEvery: pollEvery})
			defer l.Close()
			_, err = l.Scan(context.Background())
			must(t, err)
			must(t, l.Watch())
			if st := l.Status(); !st.Watching || st.Roots[0].Watches == 0 {
				t.Fatalf("status %+v", st)
			}

			must(t, os.RemoveAll(root))
			st := waitStatus(t, l, "the root's removal", func(st Status) bool { return !st.Watching })
			if !strings.Contains(st.Reason, root) || !strings.Contains(st.Reason, "removed") {
				t.Errorf("reason %q", st.Reason)
			}
			waitFor(t, l, "models of the removed root gone", func(ms []Model) bool { return len(ms) == 0 })

			must(t, os.MkdirAll(root, 0o755))
			// Even with an hour between polls the watcher re-arms (the
			// parent's watch sees the root come back).
			waitStatus(t, l, "re-armed root", func(st Status) bool { return st.Watching && st.Reason == "" })
			writeSnapshot(t, root, "o/new", commitB, map[string][]byte{"config.json": cfg}, "main")
			waitFor(t, l, "a model in the new root folder", func(ms []Model) bool { return len(ms) == 1 && ms[0].Repo == "o/new" })
		})
	}
}

// A root moved away and another folder moved into its place is re-armed
// too: the old watches followed the old folder.
func TestWatchRootSwappedThenRescan(t *testing.T) {
	cfg := []byte(`{"model_type":"llama"}`)
	parent := t.TempDir()
	root := filepath.Join(parent, "hub")
	writeSnapshot(t, root, "o/old", commitA, map[string][]byte{"config.json": cfg}, "main")
	other := filepath.Join(parent, "staged")
	writeSnapshot(t, other, "o/staged", commitA, map[string][]byte{"config.json": cfg}, "main")
	l := watchLib(t, nil, root)
	must(t, os.Rename(root, filepath.Join(parent, "old")))
	must(t, os.Rename(other, root))
	// A rescan (the UI's button) both finds the swapped-in models and
	// leaves the watcher armed on the new folder.
	_, err := l.Scan(context.Background())
	must(t, err)
	waitStatus(t, l, "armed on the swapped-in root", func(st Status) bool { return st.Watching })
	writeSnapshot(t, root, "o/later", commitB, map[string][]byte{"config.json": cfg}, "main")
	waitFor(t, l, "a model added after the swap", func(ms []Model) bool {
		repos := map[string]bool{}
		for _, m := range ms {
			repos[m.Repo] = true
		}
		return len(ms) == 2 && repos["o/staged"] && repos["o/later"]
	})
}

// A root with more folders than the budget holds no watches, says so, and
// is kept current by rescans; the other roots are watched as usual.
// Removing a root releases its watches in the kernel.
func TestWatchBudgetAndRelease(t *testing.T) {
	base := kernelWatches(t)
	big, small := t.TempDir(), t.TempDir()
	for i := 0; i < 12; i++ {
		must(t, os.MkdirAll(filepath.Join(big, fmt.Sprintf("org%d", i), "m"), 0o755))
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "hark.db"))
	must(t, err)
	defer db.Close()
	l := New(Options{DB: db, Roots: []Root{{Path: small}, {Path: big}}, WatchBudget: 8, Quiet: 50 * time.Millisecond, MaxDelay: 300 * time.Millisecond, PollEvery: 200 * time.Millisecond})
	defer l.Close()
	must(t, l.Watch())
	st := l.Status()
	if st.Watching || !st.Roots[0].Watching || st.Roots[1].Watching || st.Roots[1].Watches != 0 {
		t.Fatalf("status %+v", st)
	}
	if !strings.Contains(st.Reason, big) || !strings.Contains(st.Reason, "more than 8 folders") || !strings.Contains(st.Reason, "rescanning") {
		t.Errorf("reason %q", st.Reason)
	}
	if got := kernelWatches(t) - base; got != 1 {
		t.Errorf("%d kernel watches, want 1 (the small root)", got)
	}
	// The over-budget root still updates, by rescans.
	dir := filepath.Join(big, "org0", "m")
	must(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), safetensorsBytes(map[string][]int64{"w": {3}}, "F16"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type":"llama"}`), 0o644))
	waitFor(t, l, "model in the over-budget root", func(ms []Model) bool { return len(ms) == 1 })

	// A bigger budget watches it; dropping it releases every watch.
	l.SetWatchBudget(100)
	if st := l.Status(); !st.Watching || st.Roots[1].Watches != 25 {
		t.Fatalf("after raising the budget: %+v", st)
	}
	if got := kernelWatches(t) - base; got != 26 {
		t.Errorf("%d kernel watches, want 26", got)
	}
	must(t, l.SetRoots(context.Background(), []Root{{Path: small}}))
	if got := kernelWatches(t) - base; got != 1 {
		t.Errorf("%d kernel watches after removing the big root, want 1", got)
	}
}
