package transcribe

import (
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

func TestZlibSizeMatchesCPython(t *testing.T) {
	// len(zlib.compress(x)) from CPython.
	for s, want := range map[string]int{"": 8, "hello": 13} {
		if got, ok := zlibSize([]byte(s)); !ok || got != want {
			t.Errorf("zlibSize(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	// Every window text of the golden transcribe traces, with the length
	// CPython's zlib 1.2.13 gave.
	dir := filepath.Join(mlxtest.Assets(t, "whisper", "golden"), "transcribe")
	files, _ := filepath.Glob(filepath.Join(dir, "*.trace.json"))
	more, _ := filepath.Glob(filepath.Join(dir, "varied", "*.trace.json"))
	n := 0
	for _, f := range append(files, more...) {
		var tr struct {
			Windows []struct {
				Text    string `json:"text"`
				UTF8Len int    `json:"text_utf8_len"`
				ZlibLen int    `json:"zlib_compressed_len"`
			} `json:"windows"`
		}
		readJSONFile(t, f, &tr)
		for i, w := range tr.Windows {
			if len(w.Text) != w.UTF8Len {
				t.Fatalf("%s window %d: text is %d bytes, trace says %d", f, i, len(w.Text), w.UTF8Len)
			}
			got, ok := zlibSize([]byte(w.Text))
			if !ok || got != w.ZlibLen {
				t.Errorf("%s window %d: zlib size %d (%v), want %d", filepath.Base(f), i, got, ok, w.ZlibLen)
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d golden windows", n)
	}
	// Long inputs fall back (more than one deflate block).
	if _, ok := zlibSize([]byte(strings.Repeat("abcdefghij", 4000))); ok {
		t.Error("40 kB accepted as a single block")
	}
}
