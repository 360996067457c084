// Package mlxtest holds helpers shared by tests across Hark: locating the
// shared real-data assets that live beside the repository (never inside it).
package mlxtest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	rootOnce sync.Once
	rootDir  string
)

// repoRoot walks up from the working directory (a package dir under go test)
// to the directory holding go.mod.
func repoRoot() string {
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				rootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return
			}
			dir = parent
		}
	})
	return rootDir
}

// AssetsDir returns ../shared/assets relative to the repository root, or ""
// when it is absent (a user's fresh clone). HARK_ASSETS overrides it.
func AssetsDir() string {
	if d := os.Getenv("HARK_ASSETS"); d != "" {
		// Absolute, so that paths made from it (symlinks in a test's temp
		// directory, say) hold from anywhere.
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return d
	}
	root := repoRoot()
	if root == "" {
		return ""
	}
	d := filepath.Join(root, "..", "shared", "assets")
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return ""
	}
	return d
}

// Assets returns the path of a file or folder inside the shared assets, and
// skips the test with a clear message when it is not there.
func Assets(tb testing.TB, rel ...string) string {
	tb.Helper()
	base := AssetsDir()
	if base == "" {
		tb.Skip("shared assets not found at ../shared/assets (set HARK_ASSETS); skipping real-data test")
	}
	p := filepath.Join(append([]string{base}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("shared asset %s not present: %v", p, err)
	}
	return p
}
