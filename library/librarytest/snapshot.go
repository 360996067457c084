// Package librarytest writes Hugging Face cache layouts for tests of the
// packages above the library (app, cli), so each does not carry its own
// copy of huggingface_hub's on-disk format.
package librarytest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"hark/library"
)

// WriteSnapshot lays files out as huggingface_hub does: blobs named by
// their sha256, relative symlinks in snapshots/<commit>/, and refs/main
// holding the commit. It returns the repo folder.
func WriteSnapshot(tb testing.TB, cache, repo, commit string, files map[string][]byte) string {
	tb.Helper()
	repoDir := filepath.Join(cache, library.RepoFolder(repo))
	snap := filepath.Join(repoDir, "snapshots", commit)
	for _, d := range []string{filepath.Join(repoDir, "blobs"), filepath.Join(repoDir, "refs"), snap} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	for name, b := range files {
		sum := sha256.Sum256(b)
		blob := hex.EncodeToString(sum[:])
		if err := os.WriteFile(filepath.Join(repoDir, "blobs", blob), b, 0o644); err != nil {
			tb.Fatal(err)
		}
		if err := os.Symlink("../../blobs/"+blob, filepath.Join(snap, name)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(commit), 0o644); err != nil {
		tb.Fatal(err)
	}
	return repoDir
}

// ReadFiles reads the named files of dir into a map for WriteSnapshot.
func ReadFiles(tb testing.TB, dir string, names ...string) map[string][]byte {
	tb.Helper()
	files := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			tb.Fatal(err)
		}
		files[n] = b
	}
	return files
}
