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

// kill -9 in the middle of library scans: after a restart the user's
// conversation and settings in the same database are unchanged, the database
// opens and passes its integrity check, the index holds every repo of the
// last committed scan (or of the one in flight, never part of one), each
// with its files, and the next scan lists exactly what is on disk.
func TestScanKilledIndexConsistent(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root, dbPath := t.TempDir(), filepath.Join(t.TempDir(), "hark.db")
	// What the user had in the same database before the scans: a
	// conversation and settings, which the kill must not touch.
	ctx := context.Background()
	mine := userData(t, dbPath)
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
	mine.check(t, db)
	l := New(Options{DB: db, Roots: []Root{{Path: root, Origin: "test"}}})
	defer l.Close()
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

// userRows is what a user had in hark.db before a crash.
type userRows struct {
	conv     store.Conversation
	msgs     []store.Message
	settings store.Settings
}

func userData(t *testing.T, dbPath string) userRows {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(dbPath)
	must(t, err)
	defer db.Close()
	var u userRows
	u.conv, err = db.CreateConversation(ctx, store.Conversation{Title: "kept"})
	must(t, err)
	for _, text := range []string{"a question", "an answer"} {
		_, err := db.AddMessage(ctx, store.Message{ConversationID: u.conv.ID, Role: "user", Content: text})
		must(t, err)
	}
	u.msgs, err = db.Messages(ctx, u.conv.ID)
	must(t, err)
	s := store.DefaultSettings()
	s.WatchBudget, s.Theme = 1234, "dark"
	must(t, db.SaveSettings(ctx, s))
	u.settings, err = db.Settings(ctx)
	must(t, err)
	return u
}

func (u userRows) check(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	msgs, err := db.Messages(ctx, u.conv.ID)
	if err != nil || fmt.Sprint(msgs) != fmt.Sprint(u.msgs) {
		t.Fatalf("conversation after the kill: %+v %v; before: %+v", msgs, err, u.msgs)
	}
	s, err := db.Settings(ctx)
	if err != nil || fmt.Sprint(s) != fmt.Sprint(u.settings) {
		t.Fatalf("settings after the kill: %+v %v; before: %+v", s, err, u.settings)
	}
}
