package library

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Progress reports long work: done and total in bytes, and what is on.
type Progress func(done, total int64, message string)

// VerifyResult is what a verify found for one model.
type VerifyResult struct {
	ID         string     `json:"id"`
	Path       string     `json:"path"`
	OK         bool       `json:"ok"`
	Checked    int        `json:"checked"` // files whose hash was checked
	Bytes      int64      `json:"bytes"`
	Mismatches []Mismatch `json:"mismatches"`
	// Unhashed are files with nothing to check against (plain dirs, or
	// blobs not named by a hash).
	Unhashed []string `json:"unhashed"`
	// Problems are missing shards, dangling symlinks, unreadable files
	// and anything that would stop the model loading (a bad config.json or
	// safetensors header, tensors missing), found by re-reading it now.
	Problems []string `json:"problems"`
	// Checks lists what was validated besides hashes, e.g. "config.json",
	// "2 safetensors headers (291 tensors)": a plain folder has no hashes
	// yet still gets a real verdict.
	Checks []string `json:"checks"`
}

// Mismatch is a blob whose content does not hash to its name.
type Mismatch struct {
	File     string `json:"file"`
	Blob     string `json:"blob"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Algo     string `json:"algo"` // sha256 (LFS) or git-sha1
}

// Verify re-reads a model from disk and hashes every blob named by a hash:
// sha256 for LFS files, the git blob sha1 for small files (the Hub's ETag
// for them). Blobs are read from the cache's blobs/ folder, never through
// a symlink, so nothing outside the cache is opened.
func (l *Library) Verify(ctx context.Context, id string, progress Progress) (VerifyResult, error) {
	m, err := l.Get(ctx, id)
	if err != nil {
		return VerifyResult{}, err
	}
	res, err := verifyModel(ctx, m, progress)
	if err == nil {
		l.recordVerify(m, res)
	}
	return res, err
}

func verifyModel(ctx context.Context, m Model, progress Progress) (VerifyResult, error) {
	if progress == nil {
		progress = func(int64, int64, string) {}
	}
	res := VerifyResult{ID: m.ID, Path: m.Path, Mismatches: []Mismatch{}, Unhashed: []string{}, Problems: []string{}, Checks: []string{}}
	// Fresh facts, not the index's: the point is to look at the disk.
	fresh := Model{Path: m.Path, Source: m.Source}
	blobs := ""
	if m.Source == "hf" {
		blobs = filepath.Join(m.Unit, "blobs")
	}
	if !describeModel(&fresh, m.Path, blobs) {
		return res, fmt.Errorf("%s no longer exists", m.Path)
	}
	res.Problems = append(res.Problems, fresh.Problems...)
	if !fresh.Supported && fresh.Reason != "" && len(fresh.Problems) == 0 {
		// Intact files of an architecture (or quantization, or config
		// value) Hark does not run still will not load: "ok" would say
		// otherwise. Missing or broken files are already problems.
		res.Problems = append(res.Problems, "Hark cannot load it: "+fresh.Reason)
	}
	checks, problems := loadChecks(&fresh, m.Path)
	res.Checks = append(res.Checks, checks...)
	res.Problems = append(res.Problems, problems...)
	type item struct {
		file, blob string
		size       int64
	}
	var todo []item
	var total int64
	seen := map[string]bool{}
	for _, f := range fresh.Files {
		if f.Problem != "" {
			continue
		}
		if f.Blob == "" || !(isSHA256(f.Blob) || IsCommit(f.Blob)) {
			res.Unhashed = append(res.Unhashed, f.Name)
			continue
		}
		if seen[f.Blob] {
			continue
		}
		seen[f.Blob] = true
		todo = append(todo, item{f.Name, f.Blob, f.Size})
		total += f.Size
	}
	var done int64
	progress(0, total, "")
	for _, it := range todo {
		algo, sum, err := hashBlob(ctx, filepath.Join(blobs, it.blob), isSHA256(it.blob), func(n int64) {
			progress(done+n, total, it.file)
		})
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			res.Problems = append(res.Problems, fmt.Sprintf("%s: %s", it.file, describeErr(err)))
			continue
		}
		done += it.size
		res.Checked++
		res.Bytes += it.size
		if !strings.EqualFold(sum, it.blob) {
			res.Mismatches = append(res.Mismatches, Mismatch{File: it.file, Blob: it.blob, Expected: strings.ToLower(it.blob), Actual: sum, Algo: algo})
		}
		progress(done, total, it.file)
	}
	res.OK = len(res.Mismatches) == 0 && len(res.Problems) == 0
	return res, nil
}

// hashBlob hashes a blob as sha256, or as a git blob object (sha1 over
// "blob <size>\0" and the content) when lfs is false.
func hashBlob(ctx context.Context, path string, lfs bool, progress func(int64)) (string, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "", err
	}
	if !st.Mode().IsRegular() {
		return "", "", errors.New("blob is not a regular file")
	}
	var h hash.Hash
	algo := "sha256"
	if lfs {
		h = sha256.New()
	} else {
		algo = "git-sha1"
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", st.Size())
	}
	buf := make([]byte, 1<<20)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
		k, err := f.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		if k > 0 {
			progress(n)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", "", err
		}
	}
	return algo, hex.EncodeToString(h.Sum(nil)), nil
}

// verifyMark is a failed verify remembered against the model as it was
// then: a hash mismatch is something no scan sees, yet the list must stop
// calling the model Ready. A change to the model's files drops the mark.
type verifyMark struct {
	problems []string
	size     int64
	modified int64
}

// recordVerify remembers a failed verify for the list, or forgets one
// after a verify passes, and tells listeners.
func (l *Library) recordVerify(m Model, res VerifyResult) {
	l.mu.Lock()
	_, had := l.verified[m.Path]
	if res.OK {
		delete(l.verified, m.Path)
	} else {
		var ps []string
		for _, mm := range res.Mismatches {
			ps = append(ps, fmt.Sprintf("verify: %s does not match its %s hash", mm.File, mm.Algo))
		}
		for _, p := range res.Problems {
			ps = append(ps, "verify: "+p)
		}
		if l.verified == nil {
			l.verified = map[string]verifyMark{}
		}
		l.verified[m.Path] = verifyMark{problems: ps, size: m.Size, modified: m.Modified.UnixNano()}
	}
	l.mu.Unlock()
	if had || !res.OK {
		l.notify(Change{Units: []string{m.Unit}})
	}
}

// withVerify applies remembered verify failures to listed models.
func (l *Library) withVerify(ms []Model) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range ms {
		m := &ms[i]
		mark, ok := l.verified[m.Path]
		if !ok {
			continue
		}
		if mark.size != m.Size || mark.modified != m.Modified.UnixNano() {
			delete(l.verified, m.Path) // the files changed since
			continue
		}
		m.Problems = append(m.Problems, mark.problems...)
		for _, p := range mark.problems {
			if strings.Contains(p, "no weights") || strings.Contains(p, "missing") {
				m.Incomplete = true
			}
		}
		if m.Supported {
			m.Supported = false
			m.Reason = "verify found a problem: " + strings.TrimPrefix(mark.problems[0], "verify: ")
		}
	}
}
