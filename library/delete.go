package library

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DeleteResult says what a delete removed (or would remove, for a dry run).
type DeleteResult struct {
	Paths  []string `json:"paths"` // snapshot folders (or the repo folder)
	Blobs  int      `json:"blobs"` // blobs removed
	Freed  int64    `json:"freed"` // bytes
	DryRun bool     `json:"dryRun"`
	// Kept counts blobs of the deleted snapshot still used by another.
	Kept int `json:"kept"`
}

// Delete removes a snapshot, or the whole repo when repo is true. Only
// blobs no remaining snapshot references are removed; symlinks are never
// followed, so nothing outside the repo folder is touched. With dryRun it
// only computes what would be freed (for the confirmation dialog).
func (l *Library) Delete(ctx context.Context, id string, repo, dryRun bool) (DeleteResult, error) {
	m, err := l.Resolve(ctx, id)
	if err != nil {
		return DeleteResult{}, err
	}
	if m.Path == m.Root || m.Unit == m.Root && repo {
		return DeleteResult{}, fmt.Errorf("delete %s: refusing to delete the library root %s itself", m.ID, m.Root)
	}
	var res DeleteResult
	switch {
	case m.Source != "hf":
		res, err = deleteDir(m.Path, dryRun)
	case repo || m.Path == m.Unit:
		res, err = deleteTree(m.Unit, dryRun)
	default:
		res, err = deleteSnapshot(m.Unit, m.Path, dryRun)
	}
	if err != nil {
		return res, fmt.Errorf("delete %s: %w", m.ID, err)
	}
	if !dryRun {
		if err := l.RescanUnit(ctx, m.Root, m.Unit); err != nil {
			return res, err
		}
	}
	return res, nil
}

// realDir insists p is a folder and not a symlink to one.
func realDir(p string) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symlink; refusing to delete through it", p)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", p)
	}
	return nil
}

func deleteSnapshot(repoDir, snap string, dryRun bool) (DeleteResult, error) {
	res := DeleteResult{Paths: []string{snap}, DryRun: dryRun}
	blobs := filepath.Join(repoDir, "blobs")
	for _, d := range []string{repoDir, filepath.Join(repoDir, "snapshots"), snap} {
		if err := realDir(d); err != nil {
			return res, err
		}
	}
	if filepath.Dir(snap) != filepath.Join(repoDir, "snapshots") {
		return res, fmt.Errorf("%s is not a snapshot of %s", snap, repoDir)
	}
	mine := linkedBlobs(snap, blobs)
	keep := map[string]bool{}
	entries, err := os.ReadDir(filepath.Join(repoDir, "snapshots"))
	if err != nil {
		return res, err
	}
	others := 0
	for _, e := range entries {
		p := filepath.Join(repoDir, "snapshots", e.Name())
		if p == snap {
			continue
		}
		others++
		for b := range linkedBlobs(p, blobs) {
			keep[b] = true
		}
	}
	if others == 0 {
		// The last snapshot: the repo folder goes too, with its refs and
		// any orphan blobs.
		return deleteTree(repoDir, dryRun)
	}
	var victims []string
	for b := range mine {
		if keep[b] {
			res.Kept++
			continue
		}
		st, err := os.Lstat(b)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		victims = append(victims, b)
		res.Freed += st.Size()
	}
	res.Blobs = len(victims)
	if dryRun {
		return res, nil
	}
	// Refs pointing at the deleted commit would dangle; drop them.
	commit := strings.ToLower(filepath.Base(snap))
	refs, _ := readRefs(filepath.Join(repoDir, "refs"))
	for _, name := range refs[commit] {
		os.Remove(filepath.Join(repoDir, "refs", filepath.FromSlash(name)))
	}
	if err := os.RemoveAll(snap); err != nil {
		return res, err
	}
	var errs []error
	for _, b := range victims {
		if err := os.Remove(b); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return res, errors.Join(errs...)
}

// linkedBlobs returns the blob paths snap's symlinks point at, resolved
// lexically (never followed), restricted to files directly in blobs.
func linkedBlobs(snap, blobs string) map[string]bool {
	out := map[string]bool{}
	filepath.WalkDir(snap, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return nil
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		target = filepath.Clean(target)
		if filepath.Dir(target) == blobs {
			out[target] = true
		}
		return nil
	})
	return out
}

// deleteTree removes a whole repo folder; freed counts regular files only
// (symlinks are links, and are never followed).
func deleteTree(dir string, dryRun bool) (DeleteResult, error) {
	res := DeleteResult{Paths: []string{dir}, DryRun: dryRun}
	if err := realDir(dir); err != nil {
		return res, err
	}
	blobs := filepath.Join(dir, "blobs")
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			res.Freed += info.Size()
		}
		if filepath.Dir(p) == blobs {
			res.Blobs++
		}
		return nil
	})
	if dryRun {
		return res, nil
	}
	return res, os.RemoveAll(dir)
}

// deleteDir removes a plain model directory.
func deleteDir(dir string, dryRun bool) (DeleteResult, error) {
	res, err := deleteTree(dir, dryRun)
	res.Blobs = 0
	return res, err
}
