package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"hark/library/librarytest"
	"hark/mlx/mlxtest"
)

// runChild runs Main with the JSON-encoded arguments, as the hark binary
// would, for tests that kill it.
func runChild(raw string) int {
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return Main(context.Background(), &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, args)
}

// kill -9 during `hark models pull`: the partial blob stays, `hark models`
// lists the snapshot as incomplete, and `hark models pull ID` resumes it
// with an HTTP Range request from where the partial blob ends.
func TestModelsPullKilledThenResumed(t *testing.T) {
	const commit = "fedcba9876543210fedcba9876543210fedcba98"
	src := mlxtest.Assets(t, "models", "stories260K", "hf")
	files := librarytest.ReadFiles(t, src, "config.json", "model.safetensors", "tokenizer.json")
	hub := librarytest.NewHub(t, "o/killed", commit, files)
	hub.SetSlow(16 << 10)
	cache, home := t.TempDir(), t.TempDir()
	t.Setenv("HARK_HOME", home)
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", "")
	t.Setenv("HF_ENDPOINT", hub.URL)

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), `HARK_CLI_CHILD_ARGS=["models","pull","o/killed"]`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	weights := files["model.safetensors"]
	inc := filepath.Join(cache, "models--o--killed", "blobs", librarytest.Sha256(weights)+".incomplete")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if st, err := os.Stat(inc); err == nil && st.Size() >= int64(len(weights))/4 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no partial download; child said %q", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	st, err := os.Stat(inc)
	if err != nil || st.Size() >= int64(len(weights)) {
		t.Fatalf("partial blob after the kill: %v %v", st, err)
	}
	have := st.Size()

	id := "hf:o/killed@" + commit
	code, out, errs := runModelsCLI(t, "")
	if code != ExitOK || !strings.Contains(out, id) || !strings.Contains(out, "incomplete") || strings.Contains(out, "downloading") {
		t.Fatalf("models after the kill: %d %q %q", code, out, errs)
	}
	hub.SetSlow(0)
	code, out, errs = runModelsCLI(t, "", "pull", id)
	if code != ExitOK || !strings.Contains(out, "pulled "+id) || !strings.Contains(out, "— ok") {
		t.Fatalf("resume: %d %q %q", code, out, errs)
	}
	if !strings.Contains(errs, "resuming 1 partial download(s)") {
		t.Errorf("resume not announced: %q", errs)
	}
	rs := hub.Ranges()
	if want := fmt.Sprintf("bytes=%d-", have); rs[len(rs)-1] != want {
		t.Fatalf("ranges asked %q; want the last to be %q", rs, want)
	}
	if code, out, errs := runModelsCLI(t, "", "verify", id); code != ExitOK || !strings.Contains(out, "ok") {
		t.Fatalf("verify after resume: %d %q %q", code, out, errs)
	}
}
