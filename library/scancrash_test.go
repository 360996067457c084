package library

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"

	"hark/library/store"
)

// scanRepo is the i-th repo the scan child adds.
func scanRepo(i int) string { return fmt.Sprintf("org/m%04d", i) }

// scanChild is the child half of TestScanKilledIndexConsistent: it adds
// one repo to the cache and rescans everything, over and over, printing
// the number of the repo after each scan committed.
func scanChild(dbPath, root string) {
	db, err := store.Open(dbPath)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	l := New(Options{DB: db, Roots: []Root{{Path: root, Origin: "test"}}})
	for i := 0; ; i++ {
		writeSnapshot(nopTB{}, root, scanRepo(i), commitA, map[string][]byte{"config.json": []byte(llamaConfig), "model.safetensors": llamaST("")}, "main")
		if _, err := l.Scan(context.Background()); err != nil {
			fmt.Println("scan:", err)
			os.Exit(4)
		}
		fmt.Println(i)
	}
}

// nopTB lets the child use the test helpers that write caches.
type nopTB struct{ testing.TB }

func (nopTB) Helper() {}
func (nopTB) Fatal(args ...any) {
	fmt.Println(args...)
	os.Exit(5)
}

// kill -9 in the middle of library scans: after a restart the database
// opens and passes its integrity check, the index holds every repo of the
// last committed scan (or of the one in flight, never part of one), each
// with its files, and the next scan lists exactly what is on disk.
func TestScanKilledIndexConsistent(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root, dbPath := t.TempDir(), filepath.Join(t.TempDir(), "hark.db")
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "HARK_SCAN_CHILD_DB="+dbPath, "HARK_SCAN_CHILD_ROOT="+root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	last := -1
	for sc.Scan() {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %s", sc.Text())
		}
		if last = n; n >= 60 {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if last < 60 {
		t.Fatalf("child stopped after repo %d", last)
	}

	db, err := store.Open(dbPath) // runs PRAGMA quick_check
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer db.Close()
	l := New(Options{DB: db, Roots: []Root{{Path: root, Origin: "test"}}})
	defer l.Close()
	ctx := context.Background()
	ms, err := l.List(ctx)
	must(t, err)
	var repos []string
	for _, m := range ms {
		repos = append(repos, m.Repo)
		full, err := l.Get(ctx, m.ID)
		if err != nil || len(full.Files) != 2 || full.FileCount != 2 || full.Incomplete {
			t.Fatalf("%s half indexed: %d files (count %d), incomplete %v, %v", m.Repo, len(full.Files), full.FileCount, full.Incomplete, err)
		}
	}
	sort.Strings(repos)
	if n := len(repos); n != last+1 && n != last+2 {
		t.Fatalf("index holds %d repos; the last committed scan had %d", n, last+1)
	}
	for i, r := range repos {
		if r != scanRepo(i) {
			t.Fatalf("index repo %d is %s, want %s", i, r, scanRepo(i))
		}
	}
	// The next scan agrees with the disk: every repo written before the
	// kill, and the one being written then if its snapshot folder exists.
	ms = scanAll(t, l)
	_, err = os.Stat(filepath.Join(root, RepoFolder(scanRepo(last+1)), "snapshots"))
	want := last + 1
	if err == nil {
		want++
	}
	if len(ms) != want {
		t.Fatalf("after a rescan: %d models, want %d", len(ms), want)
	}
	for _, m := range ms {
		if m.Repo != scanRepo(last+1) && (m.Incomplete || !m.Supported || m.FileCount != 2) {
			t.Fatalf("after a rescan: %+v", m)
		}
	}
}
