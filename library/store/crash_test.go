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
	path := os.Getenv("HARK_CRASH_CHILD_DB")
	if path == "" {
		return
	}
	db, err := Open(path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
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
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hark.db")
	for round := 0; round < 3; round++ {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "HARK_CRASH_CHILD_DB="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		last := 0
		// Kill at a different point each round, mid-stream.
		for sc.Scan() {
			n, err := strconv.Atoi(sc.Text())
			if err != nil {
				t.Fatalf("child: %s", sc.Text())
			}
			last = n
			if n >= 40+round*37 {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
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
