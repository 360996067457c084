package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hark/mlx/mlxtest"
)

// Ctrl-C or SIGTERM (main.go cancels Main's context) stops `hark chat`
// while the model's chat template renders without end: the cancel reaches
// templating through the chat path, not only through `hark template`.
func TestChatCancelledDuringTemplate(t *testing.T) {
	liftLimits(t)
	src := mlxtest.Assets(t, "models", "stories260K", "hf")
	dir := t.TempDir()
	for _, n := range []string{"config.json", "model.safetensors", "tokenizer.json"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _ := json.Marshal(map[string]string{"chat_template": hostileTemplates["loop iterations"], "bos_token": "<s>", "eos_token": "</s>"})
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HARK_HOME", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		code int
		errs string
	}
	done := make(chan result, 1)
	go func() {
		var errb bytes.Buffer
		code := Main(ctx, &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errb}, []string{"chat", "--model", dir, "-p", "hi"})
		done <- result{code, errb.String()}
	}()
	// Give it time to load the model and enter the template.
	time.Sleep(500 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("chat ended before the cancel: exit %d, %q", r.code, r.errs)
	default:
	}
	cancel()
	select {
	case r := <-done:
		if r.code == ExitOK || !strings.Contains(r.errs, "chat template") || !strings.Contains(r.errs, "context canceled") {
			t.Errorf("exit %d after a cancel, stderr %q", r.code, r.errs)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("hark chat ignored cancellation while its template rendered")
	}
}
