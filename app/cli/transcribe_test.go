package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hark/mlx/mlxtest"
)

func TestTranscribeCommand(t *testing.T) {
	mlxtest.NoLeaks(t)
	model := mlxtest.Assets(t, "whisper", "golden", "model")
	jfk := mlxtest.Assets(t, "audio", "jfk.wav")
	dir := t.TempDir()
	bad := filepath.Join(dir, "notes.wav")
	if err := os.WriteFile(bad, []byte("not audio at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.flac")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	// Flags after the files, a failing file in the middle: the others
	// still run and the exit code reports the failure.
	code, stdout, stderr := runCLI(t, "", "transcribe", bad, jfk, empty, "--model", model, "--temperature", "0",
		"--language", "en", "--format", "json", "-o", out)
	if code != ExitError {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout with -o: %q", stdout)
	}
	for _, want := range []string{"notes.wav: not a recognised audio file", "empty.flac:", "2 of 3 files failed", "jfk.wav 100%"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "jfk.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Text     string           `json:"text"`
		Language string           `json:"language"`
		Segments []map[string]any `json:"segments"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	// golden/transcribe/jfk.json: 4 segments, the first at 0.9-1.6 s.
	if res.Language != "en" || len(res.Segments) != 4 || res.Segments[0]["start"] != 0.9 || res.Segments[0]["end"] != 1.6 {
		t.Errorf("unexpected result: language %q, %d segments, first %v", res.Language, len(res.Segments), res.Segments[0])
	}
}

func TestTranscribeCommandErrors(t *testing.T) {
	jfk := mlxtest.Assets(t, "audio", "jfk.wav")
	if code, _, stderr := runCLI(t, "", "transcribe", jfk); code != ExitUsage || !strings.Contains(stderr, "--model is required") {
		t.Errorf("no model: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "transcribe", "--model", "x"); code != ExitUsage || !strings.Contains(stderr, "no audio files") {
		t.Errorf("no files: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "transcribe", jfk, "--model", "x", "--format", "docx"); code != ExitUsage || !strings.Contains(stderr, "docx") {
		t.Errorf("bad format: exit %d, %s", code, stderr)
	}
	missing := filepath.Join(t.TempDir(), "no-such-model")
	if err := os.MkdirAll(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "transcribe", jfk, "--model", missing)
	if code != ExitError || !strings.Contains(stderr, "config.json") {
		t.Errorf("empty model folder: exit %d, %s", code, stderr)
	}
}

func TestAudioProgressPlainLines(t *testing.T) {
	var b bytes.Buffer
	p := newAudioProgress(&b, "a.wav")
	p.start = time.Now().Add(-30 * time.Second) // 30 s of audio took 30 s: 35 s to go
	p.update(30*time.Second, 65*time.Second)
	p.update(65*time.Second, 65*time.Second)
	p.done()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], " 46% 0:30/1:05 ETA 35s") || !strings.HasSuffix(lines[1], "100% 1:05/1:05") {
		t.Errorf("progress lines:\n%s", b.String())
	}
}
