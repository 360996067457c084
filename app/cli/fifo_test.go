//go:build unix

package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hark audio info on a named pipe with no writer hung in open(2), deaf to
// SIGTERM; it must answer at once.
func TestAudioInfoOnFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.wav")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	type result struct {
		code int
		out  string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, []string{"audio", "info", fifo})
		done <- result{code, out.String()}
	}()
	select {
	case r := <-done:
		if r.code != ExitError || !strings.Contains(r.out, "empty") {
			t.Errorf("exit %d, out %q", r.code, r.out)
		}
	case <-time.After(30 * time.Second):
		// Unblock the hung open so the test binary can exit.
		if f, err := openWriter(fifo); err == nil {
			f.Close()
		}
		t.Fatal("audio info hung on a FIFO")
	}
}

func openWriter(path string) (interface{ Close() error }, error) {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return closer(fd), nil
}

type closer int

func (c closer) Close() error { return syscall.Close(int(c)) }
