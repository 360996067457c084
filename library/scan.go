package library

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"hark/models/profile"
)

// maxDirDepth bounds how deep a snapshot's folders and a root's model-dir
// search go, which also ends any cycle a bind mount could create.
const (
	maxDirDepth   = 16
	maxModelDepth = 3
	maxIndexBytes = 64 << 20
)

// scanUnit scans one top-level entry of a root and returns the models in
// it. A unit that vanished returns no models and no error: the caller
// drops its rows. Problems inside a model are recorded on the model; only
// failures that say nothing about any model (the unit unreadable) err.
func scanUnit(root, unit string) ([]Model, error) {
	st, err := os.Lstat(unit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", unit, err)
	}
	if unit == root {
		// A root that is itself a model directory.
		if fileExists(filepath.Join(root, "config.json")) {
			return []Model{scanDirModel(root, unit, root)}, nil
		}
		return nil, nil
	}
	if !st.IsDir() {
		return nil, nil
	}
	name := filepath.Base(unit)
	switch {
	case name == "manifests" && isOllamaStore(root):
		return scanOllama(root, unit), nil
	case name == "blobs" && isOllamaStore(root):
		return nil, nil // the manifests list what the blobs hold
	case strings.HasPrefix(name, "."):
		return nil, nil
	case strings.HasPrefix(name, repoPrefix):
		return scanHFRepo(root, unit), nil
	case strings.HasPrefix(name, "datasets--"), strings.HasPrefix(name, "spaces--"):
		return nil, nil
	}
	var out []Model
	findModelDirs(unit, 1, func(dir string) { out = append(out, scanDirModel(root, unit, dir)) })
	return out, nil
}

// units lists a root's top-level entries worth scanning.
func units(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	out := []string{}
	if fileExists(filepath.Join(root, "config.json")) {
		out = append(out, root)
	}
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "datasets--") || strings.HasPrefix(n, "spaces--") {
			continue
		}
		out = append(out, filepath.Join(root, n))
	}
	return out, nil
}

// unitOf maps a path under root to the unit holding it.
func unitOf(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return root
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return filepath.Join(root, first)
}

// findModelDirs calls fn for each directory holding config.json, searching
// at most maxModelDepth levels and not inside a model directory.
func findModelDirs(dir string, depth int, fn func(string)) {
	if fileExists(filepath.Join(dir, "config.json")) {
		fn(dir)
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	// LM Studio keeps GGUF models in org/repo folders without a config;
	// list them so the user sees why Hark will not run them.
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(strings.ToLower(e.Name()), ".gguf") {
			fn(dir)
			return
		}
	}
	if depth >= maxModelDepth {
		return
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			findModelDirs(filepath.Join(dir, e.Name()), depth+1, fn)
		}
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// scanHFRepo reads one models--org--name folder.
func scanHFRepo(root, repoDir string) []Model {
	repoID, err := ParseRepoFolder(filepath.Base(repoDir))
	if err != nil {
		return []Model{brokenRepo(root, repoDir, "", err.Error())}
	}
	refs, refProblems := readRefs(filepath.Join(repoDir, "refs"))
	downloading := downloadInProgress(root, repoDir)
	entries, err := os.ReadDir(filepath.Join(repoDir, "snapshots"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return []Model{brokenRepo(root, repoDir, repoID, "cannot read snapshots: "+describeErr(err))}
	}
	var out []Model
	for _, e := range entries {
		if !e.IsDir() {
			// huggingface_hub makes snapshot folders, never links; a link
			// (one looping onto itself, say) would vanish from the list
			// without a word, so say why it is skipped.
			if e.Type()&fs.ModeSymlink != 0 {
				why := "a symlink, not a folder; not followed"
				if _, err := os.Stat(filepath.Join(repoDir, "snapshots", e.Name())); err != nil {
					why = "a broken or looping symlink (" + describeErr(err) + ")"
				}
				refProblems = append(refProblems, fmt.Sprintf("snapshot %s is %s", safeName(e.Name()), why))
			}
			continue
		}
		snap := filepath.Join(repoDir, "snapshots", e.Name())
		m, ok := scanSnapshot(root, repoDir, repoID, snap, refs)
		if !ok {
			continue // deleted while we looked
		}
		m.Problems = append(m.Problems, refProblems...)
		m.Downloading = downloading
		out = append(out, m)
	}
	if len(out) == 0 && len(refProblems) > 0 {
		out = append(out, brokenRepo(root, repoDir, repoID, refProblems...))
	}
	// A ref naming a snapshot that is not there is worth saying.
	for commit, names := range refs {
		found := false
		for _, m := range out {
			found = found || m.Commit == commit
		}
		if !found && len(out) > 0 {
			out[0].Problems = append(out[0].Problems, fmt.Sprintf("refs %s point at commit %s, which has no snapshot folder", strings.Join(names, ", "), commit))
		}
	}
	return out
}

// brokenRepo is the index entry of a repo folder that holds no readable
// snapshot but does hold problems the user should see.
func brokenRepo(root, repoDir, repoID string, problems ...string) Model {
	return Model{Path: repoDir, ID: repoDir, Source: "hf", Root: root, Unit: repoDir, Repo: repoID,
		Kind: profile.KindOther, Refs: []string{}, Files: []File{}, Architectures: []string{},
		Problems: problems, Incomplete: true, Reason: "no usable snapshot"}
}

// readRefs maps commit → ref names from refs/ (nested names such as
// refs/pr/1 included). Unreadable or garbage refs become problems.
func readRefs(dir string) (map[string][]string, []string) {
	refs := map[string][]string{}
	var problems []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, "cannot read refs: "+describeErr(err))
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		name := filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			problems = append(problems, fmt.Sprintf("ref %s is not a regular file", name))
			return nil
		}
		b, err := readLimited(p, maxRefBytes)
		if err != nil {
			problems = append(problems, fmt.Sprintf("ref %s: %s", name, describeErr(err)))
			return nil
		}
		commit, err := ParseRef(b)
		if err != nil {
			problems = append(problems, fmt.Sprintf("ref %s: %v", name, err))
			return nil
		}
		refs[commit] = append(refs[commit], name)
		return nil
	})
	for _, names := range refs {
		sort.Strings(names)
	}
	return refs, problems
}

// downloadInProgress reports whether a download is writing one of the
// repo's blobs: a .incomplete blob under its download lock. A partial
// blob nobody holds (a killed or cancelled pull) leaves the snapshot
// Incomplete, and resumable, rather than "downloading" forever.
func downloadInProgress(root, repoDir string) bool {
	entries, _ := os.ReadDir(filepath.Join(repoDir, "blobs"))
	for _, e := range entries {
		if etag, ok := strings.CutSuffix(e.Name(), ".incomplete"); ok && blobLocked(root, filepath.Base(repoDir), etag) {
			return true
		}
	}
	return false
}

// PartialBlobs counts the .incomplete blobs of a repo folder and their
// bytes: what a pull of it would resume.
func PartialBlobs(repoDir string) (n int, size int64) {
	entries, _ := os.ReadDir(filepath.Join(repoDir, "blobs"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".incomplete") {
			if info, err := e.Info(); err == nil {
				n++
				size += info.Size()
			}
		}
	}
	return n, size
}

// scanSnapshot reads snapshots/<commit>. ok is false when the folder
// disappeared during the scan.
func scanSnapshot(root, repoDir, repoID, snap string, refs map[string][]string) (Model, bool) {
	name := filepath.Base(snap)
	m := Model{Path: snap, ID: snap, Source: "hf", Root: root, Unit: repoDir, Repo: repoID, Refs: []string{}}
	if IsCommit(name) {
		m.Commit = strings.ToLower(name)
		m.Fingerprint = "hf:" + repoID + "@" + m.Commit
		m.ID = m.Fingerprint
		if r := refs[m.Commit]; r != nil {
			m.Refs = r
		}
	} else {
		m.Problems = append(m.Problems, fmt.Sprintf("snapshot folder %q is not a commit hash", name))
	}
	if !describeModel(&m, snap, filepath.Join(repoDir, "blobs")) {
		return m, false
	}
	return m, true
}

// scanDirModel reads a model directory outside the HF cache.
func scanDirModel(root, unit, dir string) Model {
	rel, _ := filepath.Rel(root, dir)
	m := Model{Path: dir, ID: dir, Source: "dir", Root: root, Unit: unit, Repo: filepath.ToSlash(rel), Refs: []string{}}
	if rel == "." {
		m.Repo = filepath.Base(dir)
	}
	describeModel(&m, dir, "")
	m.ContentID = ContentID(m.ConfigHash, m.Files)
	return m
}

// ContentID identifies a non-HF model directory by what it holds: the
// first 16 hex of sha256 over the config fingerprint and each file's
// slash path and size, one "name\tsize\n" line per file in name order.
func ContentID(configHash string, files []File) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", configHash)
	for _, f := range files {
		fmt.Fprintf(h, "%s\t%d\n", f.Name, f.Size)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// describeModel fills files, sizes, config facts and problems from dir.
// blobs is the repo's blobs folder for HF snapshots ("" for plain dirs).
// It returns false when dir no longer exists.
func describeModel(m *Model, dir, blobs string) bool {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err == nil {
		m.Modified = st.ModTime()
	}
	seen := map[string]bool{} // resolved blob paths already counted
	var fileSt = map[string]fs.FileInfo{}
	walkFiles(m, dir, "", blobs, 0, seen, fileSt)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return false
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Name < m.Files[j].Name })
	for _, f := range m.Files {
		if f.Problem != "" {
			m.Incomplete = true
			m.Problems = append(m.Problems, f.Name+": "+f.Problem)
		}
	}
	var cfg *profile.Config
	if gguf := ggufFiles(m.Files); gguf > 0 && fileSt["config.json"] == nil {
		m.Reason = "GGUF: not supported yet (Hark runs safetensors models with a config.json)"
		m.Kind = profile.KindOther
	} else {
		cfg = readConfig(m, dir, fileSt["config.json"])
		res := profile.Resolve(cfg)
		m.Kind, m.Family, m.Supported, m.Reason = res.Kind, res.Family, res.Supported, res.Reason
	}
	m.Architectures = []string{}
	if cfg != nil {
		m.ModelType, m.DType, m.ContextLength, m.Quant = cfg.ModelType, cfg.DType, cfg.ContextLength, cfg.Quant
		if cfg.Architectures != nil {
			m.Architectures = cfg.Architectures
		}
	}
	countParams(m, dir, fileSt)
	if active, ok := profile.ActiveParams(cfg, m.Params); ok {
		m.ActiveParams = active
	}
	checkShards(m, dir, fileSt)
	checkWeightsPresent(m)
	if m.Files == nil {
		m.Files = []File{}
	}
	if len(m.Problems) > 0 && m.Supported {
		// A model with missing or broken files cannot load, whatever
		// its config says.
		m.Supported = false
		m.Reason = "files are missing or broken: " + m.Problems[0]
	}
	return true
}

// walkFiles lists dir's files into m.Files, resolving symlinks without
// ever following one into a directory, and counting each blob once.
func walkFiles(m *Model, dir, prefix, blobs string, depth int, seen map[string]bool, fileSt map[string]fs.FileInfo) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			m.Problems = append(m.Problems, fmt.Sprintf("cannot read folder %s: %s", orDot(prefix), describeErr(err)))
			m.Incomplete = true
		}
		return
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".hark-tmp") {
			continue // a pull is swapping this link in
		}
		rel := prefix + safeName(name)
		full := filepath.Join(dir, name)
		switch {
		case e.IsDir():
			if depth+1 >= maxDirDepth {
				m.Problems = append(m.Problems, fmt.Sprintf("folder %s is nested too deeply; not scanned", rel))
				continue
			}
			walkFiles(m, full, rel+"/", blobs, depth+1, seen, fileSt)
		case e.Type()&fs.ModeSymlink != 0:
			f := File{Name: rel}
			st, err := os.Stat(full)
			switch {
			case err != nil:
				f.Problem = linkProblem(full, err)
			case st.IsDir():
				f.Problem = "symlink to a folder; not followed"
			default:
				f.Size = st.Size()
				target, _ := os.Readlink(full)
				resolved := target
				if !filepath.IsAbs(resolved) {
					resolved = filepath.Join(dir, resolved)
				}
				resolved = filepath.Clean(resolved)
				if blobs != "" && filepath.Dir(resolved) == blobs {
					f.Blob = filepath.Base(resolved)
				}
				if !seen[resolved] {
					seen[resolved] = true
					m.Size += st.Size()
				}
				fileSt[rel] = st
				if st.ModTime().After(m.Modified) {
					m.Modified = st.ModTime()
				}
			}
			m.Files = append(m.Files, f)
		case e.Type().IsRegular():
			st, err := e.Info()
			if err != nil {
				continue // vanished
			}
			m.Files = append(m.Files, File{Name: rel, Size: st.Size()})
			m.Size += st.Size()
			fileSt[rel] = st
			if st.ModTime().After(m.Modified) {
				m.Modified = st.ModTime()
			}
		}
	}
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return strings.TrimSuffix(p, "/")
}

// safeName makes a file name printable: bytes that are not UTF-8 are shown
// as \xNN so a bad name is reported, not mangled into another name.
func safeName(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func linkProblem(path string, err error) string {
	if errors.Is(err, syscall.ELOOP) {
		return "symlink loop"
	}
	if errors.Is(err, fs.ErrNotExist) {
		target, _ := os.Readlink(path)
		return fmt.Sprintf("dangling symlink (target %s is missing)", safeName(target))
	}
	return "unreadable symlink: " + describeErr(err)
}

// describeErr is an error without the path noise of *PathError, which the
// caller's message already names.
func describeErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrPermission) {
		return "permission denied"
	}
	return err.Error()
}

func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("file is %d bytes, over the %d-byte limit", st.Size(), limit)
	}
	buf := make([]byte, st.Size())
	n, err := f.Read(buf)
	if err != nil && st.Size() > 0 {
		return nil, err
	}
	return buf[:n], nil
}

// modTimeOf is a helper for tests and the index: a zero time when unset.
func modTimeOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
