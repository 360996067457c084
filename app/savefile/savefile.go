// Package savefile writes a file without ever replacing one: exports to
// Downloads and watch folder transcripts both land beside the user's own
// files.
package savefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Unique writes data to dir/name, or "name (2).ext" and so on when that
// exists: it never replaces a file.
func Unique(dir, name string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	ext := filepath.Ext(name)
	try := name
	for i := 1; ; i++ {
		path := filepath.Join(dir, try)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) && i < 1000 {
			try = fmt.Sprintf("%s (%d)%s", strings.TrimSuffix(name, ext), i+1, ext)
			continue
		}
		if err != nil {
			return "", fmt.Errorf("save %s: %w", path, err)
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path) // a full disk leaves no half file behind
			return "", fmt.Errorf("save %s: %w", path, err)
		}
		return path, nil
	}
}
