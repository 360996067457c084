package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func run(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(ctx, &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestHelpVersionAndUsageCodes(t *testing.T) {
	t.Setenv("HARK_HOME", t.TempDir())
	ctx := context.Background()
	if code, out, _ := run(t, ctx, "help"); code != ExitOK || !strings.Contains(out, "hark serve") {
		t.Fatalf("help: %d %q", code, out)
	}
	if code, out, _ := run(t, ctx, "version"); code != ExitOK || !strings.HasPrefix(out, "hark ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _, errs := run(t, ctx, "version", "extra"); code != ExitUsage || !strings.Contains(errs, "usage:") {
		t.Fatalf("version extra: %d %q", code, errs)
	}
	if code, _, errs := run(t, ctx, "nonsense"); code != ExitUsage || !strings.Contains(errs, "unknown command") {
		t.Fatalf("unknown: %d %q", code, errs)
	}
	if code, _, _ := run(t, ctx, "serve", "--bogus"); code != ExitUsage {
		t.Fatalf("bad flag: %d", code)
	}
	if code, out, _ := run(t, ctx, "--backend", "cpu", "version"); code != ExitOK || !strings.HasPrefix(out, "hark ") {
		t.Fatalf("--backend cpu: %d %q", code, out)
	}
	if code, _, errs := run(t, ctx, "--backend=quantum", "version"); code != ExitUsage || !strings.Contains(errs, `unknown backend "quantum" (available: auto, cpu`) {
		t.Fatalf("bad --backend: %d %q", code, errs)
	}
	if code, _, errs := run(t, ctx, "serve", "--addr", "0.0.0.0:0"); code != ExitUsage || !strings.Contains(errs, "loopback") || !strings.Contains(errs, "--api-key") {
		t.Fatalf("non-loopback without a key: %d %q", code, errs)
	}
	if code, _, errs := run(t, ctx, "serve", "--api-key", "short"); code != ExitUsage || !strings.Contains(errs, "at least 8") {
		t.Fatalf("short key: %d %q", code, errs)
	}
}

// syncBuffer lets the test read what serve printed while it runs.
type syncBuffer struct {
	ch chan string
}

func (s *syncBuffer) Write(p []byte) (int, error) { s.ch <- string(p); return len(p), nil }

func TestServeAnnouncesAddressAndServes(t *testing.T) {
	t.Setenv("HARK_HOME", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{ch: make(chan string, 16)}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, &Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: io.Discard}, []string{"--backend", "cpu", "serve", "--addr", "127.0.0.1:0"})
	}()
	var line string
	select {
	case line = <-out.ch:
	case <-time.After(20 * time.Second):
		t.Fatal("serve printed nothing")
	}
	url := strings.TrimSpace(strings.TrimPrefix(line, "Hark is serving on "))
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("announce line %q", line)
	}
	res, err := http.Get(url + "/api/info")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	// The app selects with the global --backend over its saved setting.
	if res.StatusCode != 200 || !strings.Contains(string(b), `"dbPath"`) || !strings.Contains(string(b), `"reason":"--backend asked for cpu"`) {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on cancel")
	}
}

func TestServeNamesCorruptDatabase(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HARK_HOME", home)
	db := filepath.Join(home, "hark.db")
	os.WriteFile(db, bytes.Repeat([]byte("garbage!"), 1000), 0o644)
	code, _, errs := run(t, context.Background(), "serve", "--addr", "127.0.0.1:0")
	if code != ExitError || !strings.Contains(errs, db) || !strings.Contains(errs, "move it aside") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if b, _ := os.ReadFile(db); !bytes.Equal(b, bytes.Repeat([]byte("garbage!"), 1000)) {
		t.Fatal("the corrupt file was changed")
	}
}
