package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progressBar draws long work on stderr: one redrawn line (bar, %, bytes,
// rate, ETA) on a terminal, and a plain line every few seconds otherwise,
// so logs of a piped run still show it moving.
type progressBar struct {
	w     io.Writer
	label string
	tty   bool
	start time.Time

	mu        sync.Mutex
	last      time.Time
	drawn     bool
	cur       int64
	total     int64
	msg       string
	lastPlain time.Time
}

func newProgressBar(w io.Writer, label string) *progressBar {
	return &progressBar{w: w, label: label, tty: isTerminal(w), start: time.Now()}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// plainEvery is how often a non-terminal gets a progress line.
var plainEvery = 5 * time.Second

func (p *progressBar) update(done, total int64, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur, p.total, p.msg = done, total, msg
	now := time.Now()
	if p.tty {
		if now.Sub(p.last) < 100*time.Millisecond && done < total {
			return
		}
		p.last = now
		fmt.Fprintf(p.w, "\r\x1b[K%s", p.line(now, true))
		p.drawn = true
		return
	}
	if p.lastPlain.IsZero() {
		p.lastPlain = now // the first line waits, so quick work stays quiet
	}
	if now.Sub(p.lastPlain) >= plainEvery {
		p.lastPlain = now
		fmt.Fprintln(p.w, p.line(now, false))
	}
}

func (p *progressBar) line(now time.Time, bar bool) string {
	var b strings.Builder
	b.WriteString(p.label)
	pct := 0.0
	if p.total > 0 {
		pct = float64(p.cur) / float64(p.total)
	}
	if bar {
		const width = 24
		n := int(pct * width)
		fmt.Fprintf(&b, " [%s%s]", strings.Repeat("=", n), strings.Repeat(" ", width-n))
	}
	fmt.Fprintf(&b, " %3.0f%% %s/%s", pct*100, humanBytes(p.cur), humanBytes(p.total))
	el := now.Sub(p.start).Seconds()
	if el > 0.5 && p.cur > 0 {
		rate := float64(p.cur) / el
		fmt.Fprintf(&b, " %s/s", humanBytes(int64(rate)))
		if p.total > p.cur {
			eta := time.Duration(float64(p.total-p.cur)/rate) * time.Second
			fmt.Fprintf(&b, " ETA %s", eta.Round(time.Second))
		}
	}
	return b.String()
}

// done ends the line on a terminal.
func (p *progressBar) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprintf(p.w, "\r\x1b[K")
	}
}
