package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The pull progress line says the speed and a working ETA (issue 20: it
// read "0s" whatever was left), on a terminal and in a piped log alike.
func TestProgressLineRateAndETA(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	for _, tty := range []bool{true, false} {
		p := &progressBar{w: &bytes.Buffer{}, label: "pull o/r", tty: tty, start: start}
		p.cur, p.total = 50e6, 150e6
		line := p.line(start.Add(10*time.Second), tty)
		for _, want := range []string{" 33% 50.0 MB/150.0 MB", " 5.0 MB/s", " ETA 20s"} {
			if !strings.Contains(line, want) {
				t.Errorf("tty=%v: %q lacks %q", tty, line, want)
			}
		}
		if strings.Contains(line, "[") != tty {
			t.Errorf("tty=%v: bar drawn or missing: %q", tty, line)
		}
		// Long pulls read in minutes and hours, not a wrapped second count.
		p.cur, p.total = 1e9, 9e9
		if line := p.line(start.Add(100*time.Second), tty); !strings.Contains(line, " ETA 13m20s") {
			t.Errorf("tty=%v: long ETA %q", tty, line)
		}
		// Done: nothing left to wait for.
		p.cur = p.total
		if line := p.line(start.Add(100*time.Second), tty); strings.Contains(line, "ETA") || !strings.Contains(line, "100%") {
			t.Errorf("tty=%v: finished %q", tty, line)
		}
	}
}

// Piped, the progress is whole lines, one per interval, never a carriage
// return: a log file or CI output shows it moving.
func TestProgressPlainLinesWhenNotATerminal(t *testing.T) {
	orig := plainEvery
	plainEvery = 20 * time.Millisecond
	t.Cleanup(func() { plainEvery = orig })
	var out bytes.Buffer
	p := newProgressBar(&out, "pull o/r")
	if p.tty {
		t.Fatal("a bytes.Buffer taken for a terminal")
	}
	for i := int64(1); i <= 5; i++ {
		p.update(i*10, 100, "model.safetensors")
		time.Sleep(30 * time.Millisecond)
	}
	p.done()
	s := out.String()
	if strings.Contains(s, "\r") || strings.Contains(s, "\x1b") {
		t.Fatalf("terminal control codes in piped output: %q", s)
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "pull o/r ") || !strings.Contains(lines[len(lines)-1], "%") {
		t.Fatalf("want several progress lines, got %q", s)
	}
}
