package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

func decodeLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		out = append(out, m)
	}
	return out
}

func TestAudioInfoCommand(t *testing.T) {
	wav := mlxtest.Assets(t, "audio", "jfk.wav")
	flac := mlxtest.Assets(t, "audio", "jfk.flac")
	code, out, errOut := runCLI(t, "", "audio", "info", wav, flac)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := decodeLines(t, out)
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", out)
	}
	want := []map[string]any{
		{"file": wav, "container": "wav", "codec": "pcm_s16le", "sample_rate": 16000.0, "channels": 1.0, "duration": 11.0},
		{"file": flac, "container": "flac", "codec": "flac", "sample_rate": 44100.0, "channels": 2.0, "duration": 11.0},
	}
	for i, w := range want {
		for k, v := range w {
			if lines[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v (line %v)", i, k, lines[i][k], v, lines[i])
			}
		}
	}
}

// Unreadable files get an error object each, the others still print, and
// the exit code is 1.
func TestAudioInfoErrors(t *testing.T) {
	wav := mlxtest.Assets(t, "audio", "jfk.wav")
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.mp3")
	os.WriteFile(text, []byte("just some text"), 0o644)
	missing := filepath.Join(dir, "missing.wav")
	code, out, errOut := runCLI(t, "", "audio", "info", text, wav, missing)
	if code != ExitError {
		t.Fatalf("exit %d, want %d", code, ExitError)
	}
	lines := decodeLines(t, out)
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got %q", out)
	}
	if lines[0]["file"] != text || !strings.Contains(lines[0]["error"].(string), "not a recognised audio file") {
		t.Errorf("text file: %v", lines[0])
	}
	if lines[1]["sample_rate"] != 16000.0 || lines[1]["error"] != nil {
		t.Errorf("wav: %v", lines[1])
	}
	if lines[2]["file"] != missing || !strings.Contains(lines[2]["error"].(string), "no such file") {
		t.Errorf("missing file: %v", lines[2])
	}
	if !strings.Contains(errOut, "2 of 3 files could not be read") {
		t.Errorf("stderr %q", errOut)
	}
}

func TestAudioUsage(t *testing.T) {
	for _, args := range [][]string{{"audio"}, {"audio", "info"}, {"audio", "play", "x.wav"}, {"audio", "info", "--bogus", "x"}} {
		if code, _, _ := runCLI(t, "", args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}
