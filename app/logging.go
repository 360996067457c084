package app

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// maxLogBytes caps hark.log; at the cap it is renamed to hark.log.1 (the
// previous .1 is replaced), so logs never grow without bound.
const maxLogBytes = 5 << 20

// cappedFile is an io.Writer over a log file that rotates once at a size.
type cappedFile struct {
	mu   sync.Mutex
	path string
	f    *os.File
	size int64
	max  int64
}

func openCappedFile(path string, max int64) (*cappedFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &cappedFile{path: path, f: f, size: st.Size(), max: max}, nil
}

func (c *cappedFile) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size+int64(len(p)) > c.max && c.size > 0 {
		c.f.Close()
		os.Rename(c.path, c.path+".1")
		f, err := os.OpenFile(c.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return 0, err
		}
		c.f, c.size = f, 0
	}
	n, err := c.f.Write(p)
	c.size += int64(n)
	return n, err
}

func (c *cappedFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.Close()
}

// newLogger logs text to stderr and to hark.log in dir. If the file cannot
// be opened the app still runs, logging only to stderr.
func newLogger(dir string, stderr io.Writer) (*slog.Logger, io.Closer) {
	var w io.Writer = stderr
	var closer io.Closer = io.NopCloser(nil)
	if f, err := openCappedFile(filepath.Join(dir, "hark.log"), maxLogBytes); err == nil {
		w = io.MultiWriter(stderr, f)
		closer = f
	} else {
		slog.New(slog.NewTextHandler(stderr, nil)).Warn("log file unavailable; logging to stderr only", "err", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})), closer
}
