// Package app is Hark's service layer. The same services are bound to the
// Wails window and served as a local HTTP JSON API (hark serve), so the UI
// runs unchanged in the desktop shell and in a browser.
package app

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/adrg/xdg"
)

// DataDir is where Hark keeps its database, logs and lock file:
// HARK_HOME when set, else ~/Library/Application Support/Hark on macOS and
// $XDG_DATA_HOME/hark (~/.local/share/hark) on Linux.
func DataDir() string {
	if d := os.Getenv("HARK_HOME"); d != "" {
		return d
	}
	name := "hark"
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		name = "Hark"
	}
	return filepath.Join(xdg.DataHome, name)
}

// ensureDir creates the data dir with a message naming it on failure.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create data folder %s: %w", dir, err)
	}
	return nil
}
