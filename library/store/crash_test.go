package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// The child half of TestCrashSafety: it saves settings in a loop, and after
// each committed save prints the sequence number it wrote.
func init() {
	db := childDB("HARK_CRASH_CHILD_DB")
	if db == nil {
		return
	}
	ctx := context.Background()
	s := DefaultSettings()
	for i := 1; ; i++ {
		s.ModelRoots = append(s.ModelRoots, "/root-"+strconv.Itoa(i))
		s.DefaultChatModel = "seq-" + strconv.Itoa(i)
		if err := db.SaveSettings(ctx, s); err != nil {
			fmt.Println("save:", err)
			os.Exit(4)
		}
		fmt.Println(i)
	}
}

// SIGKILL a process in the middle of writing settings; the database must
// open afterwards, pass an integrity check, and hold every write that was
// reported committed (and nothing half-written).
func TestCrashSafety(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hark.db")
	for round := 0; round < 3; round++ {
		// Kill at a different point each round, mid-stream.
		last := killChild(t, "HARK_CRASH_CHILD_DB", path, 40+round*37)
		if last == 0 {
			t.Fatal("child wrote nothing")
		}

		db, err := Open(path)
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
		}
		var ok string
		if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
			t.Fatalf("integrity_check: %q %v", ok, err)
		}
		s, err := db.Settings(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n := len(s.ModelRoots)
		if n < last {
			t.Fatalf("round %d: %d writes acknowledged but only %d present", round, last, n)
		}
		if s.DefaultChatModel != "seq-"+strconv.Itoa(n) {
			t.Fatalf("half-written save: roots %d, chat model %q", n, s.DefaultChatModel)
		}
		for i, r := range s.ModelRoots {
			if r != "/root-"+strconv.Itoa(i+1) {
				t.Fatalf("write %d lost or reordered: %q", i+1, r)
			}
		}
		db.Close()
		os.Remove(path) // next round starts fresh but the same way
	}
}

// childDB is the database a child process (this test binary run again by
// killChild) writes to: nil unless the variable env names a path, when
// the process is a child; if the database does not open the child exits 3.
func childDB(env string) *DB {
	path := os.Getenv(env)
	if path == "" {
		return nil
	}
	db, err := Open(path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	return db
}

// killChild runs this test binary as a child writing to the database at
// path (env names the variable its init reads), reads the numbers it
// prints after each committed write, and SIGKILLs it once one reaches
// stop (or its output ends). It returns the last number read.
func killChild(t *testing.T, env, path string, stop int) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	last := 0
	for sc.Scan() {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("child: %s", sc.Text())
		}
		if last = n; n >= stop {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	return last
}
