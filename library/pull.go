package library

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// PullOptions configure a Puller.
type PullOptions struct {
	Cache  string              // the HF hub cache folder to write
	Getenv func(string) string // HF_ENDPOINT, HF_TOKEN
	Client *http.Client        // nil: a client with sane timeouts
}

// Puller downloads repos from the Hugging Face Hub into the cache, laid
// out exactly as huggingface_hub lays it out, so both read each other's
// downloads.
type Puller struct {
	cache    string
	endpoint *url.URL
	token    string
	client   *http.Client
}

// PullResult describes a finished pull.
type PullResult struct {
	Fingerprint string `json:"fingerprint"`
	Commit      string `json:"commit"`
	Snapshot    string `json:"snapshot"`
	Files       int    `json:"files"`
	Downloaded  int64  `json:"downloaded"` // bytes fetched (0 when all cached)
	Size        int64  `json:"size"`
}

// NewPuller returns a puller; HF_ENDPOINT overrides https://huggingface.co
// and HF_TOKEN authenticates.
func NewPuller(o PullOptions) *Puller {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	ep := strings.TrimRight(o.Getenv("HF_ENDPOINT"), "/")
	if ep == "" {
		ep = "https://huggingface.co"
	}
	u, err := url.Parse(ep)
	if err != nil {
		u = &url.URL{Scheme: "https", Host: "huggingface.co"}
	}
	c := o.Client
	if c == nil {
		c = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			ResponseHeaderTimeout: 60 * time.Second,
			IdleConnTimeout:       90 * time.Second,
		}}
	}
	// Redirects are followed by hand: the HEAD must see the Hub's own
	// headers, and the token must not travel to a CDN host.
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Puller{cache: o.Cache, endpoint: u, token: hubToken(o.Getenv), client: &cc}
}

// hubToken is HF_TOKEN, else the token `hf auth login` saved: the file at
// HF_TOKEN_PATH, else $HF_HOME/token, else ~/.cache/huggingface/token.
func hubToken(getenv func(string) string) string {
	if t := strings.TrimSpace(getenv("HF_TOKEN")); t != "" {
		return t
	}
	path := getenv("HF_TOKEN_PATH")
	if path == "" {
		home := getenv("HF_HOME")
		if home == "" {
			cache := getenv("XDG_CACHE_HOME")
			if cache == "" {
				cache = filepath.Join(homeDir(getenv), ".cache")
			}
			home = filepath.Join(cache, "huggingface")
		}
		path = filepath.Join(expandHome(home, getenv), "token")
	}
	b, err := readLimited(expandHome(path, getenv), 4096)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ParsePullRef splits "org/repo[@revision]"; the revision defaults to main.
func ParsePullRef(s string) (repo, rev string, err error) {
	repo, rev = strings.TrimSpace(s), "main"
	if i := strings.IndexByte(repo, '@'); i >= 0 {
		repo, rev = repo[:i], repo[i+1:]
	}
	if err := ValidRepoID(repo); err != nil {
		return "", "", err
	}
	if rev == "" || strings.Contains(rev, "..") || strings.HasPrefix(rev, "/") || strings.ContainsAny(rev, "\\\x00") {
		return "", "", fmt.Errorf("revision %q is not valid", rev)
	}
	return repo, rev, nil
}

type hubRevision struct {
	SHA      string `json:"sha"`
	Siblings []struct {
		RFilename string `json:"rfilename"`
	} `json:"siblings"`
}

type remoteFile struct {
	name, etag, url string
	size            int64
}

// Pull resolves rev to a commit, lists its files and downloads each one
// not already cached, resuming partial downloads with Range. Cancelling
// ctx leaves *.incomplete blobs for the next pull to resume.
func (p *Puller) Pull(ctx context.Context, repo, rev string, progress Progress) (PullResult, error) {
	if progress == nil {
		progress = func(int64, int64, string) {}
	}
	info, err := p.revision(ctx, repo, rev)
	if err != nil {
		return PullResult{}, err
	}
	commit := strings.ToLower(info.SHA)
	repoDir := filepath.Join(p.cache, RepoFolder(repo))
	snap := filepath.Join(repoDir, "snapshots", commit)
	res := PullResult{Fingerprint: "hf:" + repo + "@" + commit, Commit: commit, Snapshot: snap}
	var files []remoteFile
	var total int64
	for _, s := range info.Siblings {
		if err := checkRemoteName(s.RFilename); err != nil {
			return res, err
		}
		f, err := p.head(ctx, repo, commit, s.RFilename)
		if err != nil {
			return res, err
		}
		files = append(files, f)
		total += f.size
	}
	if err := os.MkdirAll(filepath.Join(repoDir, "blobs"), 0o755); err != nil {
		return res, fmt.Errorf("create cache folder: %w", err)
	}
	var done int64
	progress(0, total, "")
	for _, f := range files {
		unlock, err := lockBlob(ctx, p.cache, RepoFolder(repo), f.etag, func() {
			progress(done, total, "waiting for another download of "+f.name)
		})
		if err != nil {
			return res, fmt.Errorf("lock %s: %w", f.name, err)
		}
		n, err := p.fetch(ctx, repoDir, f, func(k int64) { progress(done+k, total, f.name) })
		unlock()
		res.Downloaded += n
		if err != nil {
			return res, err
		}
		done += f.size
		if err := linkSnapshotFile(repoDir, commit, f.name, f.etag); err != nil {
			return res, err
		}
		progress(done, total, f.name)
	}
	if err := os.MkdirAll(snap, 0o755); err != nil {
		return res, err
	}
	if rev != commit {
		ref := filepath.Join(repoDir, "refs", filepath.FromSlash(rev))
		if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
			return res, err
		}
		if err := writeFileAtomic(ref, []byte(commit)); err != nil {
			return res, fmt.Errorf("write ref %s: %w", rev, err)
		}
	}
	res.Files, res.Size = len(files), total
	return res, nil
}

// checkRemoteName refuses sibling names that would escape the snapshot.
func checkRemoteName(name string) error {
	clean := path.Clean(name)
	if name == "" || clean != name || path.IsAbs(name) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(name, "\\") {
		return fmt.Errorf("the hub listed an unsafe file name %q", name)
	}
	return nil
}

// url joins already-escaped path segments onto the endpoint.
func (p *Puller) url(escaped ...string) string {
	return strings.TrimRight(p.endpoint.String(), "/") + "/" + strings.Join(escaped, "/")
}

func (p *Puller) request(ctx context.Context, method, raw string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, raw, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "hark")
	if p.token != "" && req.URL.Host == p.endpoint.Host {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	return req, nil
}

func (p *Puller) revision(ctx context.Context, repo, rev string) (hubRevision, error) {
	// A revision such as refs/pr/1 travels as one escaped segment.
	target := p.url("api/models", repo, "revision", url.PathEscape(rev))
	var resp *http.Response
	for hops := 0; ; hops++ {
		req, err := p.request(ctx, http.MethodGet, target)
		if err != nil {
			return hubRevision{}, err
		}
		resp, err = p.client.Do(req)
		if err != nil {
			return hubRevision{}, fmt.Errorf("reach the hub at %s: %w", p.endpoint, err)
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode >= 400 || loc == "" || hops >= 5 {
			break
		}
		// A renamed repo redirects to its new name.
		resp.Body.Close()
		u, err := req.URL.Parse(loc)
		if err != nil {
			return hubRevision{}, err
		}
		target = u.String()
	}
	defer resp.Body.Close()
	if err := hubStatus(resp, repo, rev, p.token != ""); err != nil {
		return hubRevision{}, err
	}
	var info hubRevision
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&info); err != nil {
		return hubRevision{}, fmt.Errorf("hub answer for %s@%s: %w", repo, rev, err)
	}
	if !IsCommit(info.SHA) {
		return hubRevision{}, fmt.Errorf("hub answer for %s@%s has no commit hash", repo, rev)
	}
	return info, nil
}

func hubStatus(resp *http.Response, repo, rev string, haveToken bool) error {
	switch {
	case resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		if haveToken {
			return fmt.Errorf("%s: access denied with the HF_TOKEN given (%s)", repo, resp.Status)
		}
		return fmt.Errorf("%s: the hub wants a token (gated or private repo): set HF_TOKEN (%s)", repo, resp.Status)
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s@%s not found on the hub (%s)", repo, rev, resp.Status)
	default:
		return fmt.Errorf("hub error for %s@%s: %s", repo, rev, resp.Status)
	}
}

// head asks for a file's metadata without following redirects, except the
// relative ones the Hub uses for renamed repos.
func (p *Puller) head(ctx context.Context, repo, commit, name string) (remoteFile, error) {
	target := p.url(append([]string{repo, "resolve", commit}, escapeSegments(name)...)...)
	for hops := 0; ; hops++ {
		req, err := p.request(ctx, http.MethodHead, target)
		if err != nil {
			return remoteFile{}, err
		}
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := p.client.Do(req)
		if err != nil {
			return remoteFile{}, fmt.Errorf("%s: %w", name, err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" && !strings.Contains(loc, "://") && hops < 5 {
			u, err := req.URL.Parse(loc)
			if err != nil {
				return remoteFile{}, err
			}
			target = u.String()
			continue
		}
		if resp.StatusCode >= 400 {
			return remoteFile{}, fmt.Errorf("%s: %w", name, hubStatus(resp, repo, commit, p.token != ""))
		}
		f := remoteFile{name: name, url: target}
		if got := strings.ToLower(resp.Header.Get("X-Repo-Commit")); got != "" && got != commit {
			return f, fmt.Errorf("%s: the hub served commit %s while %s was asked for", name, got, commit)
		}
		f.etag = normalizeETag(resp.Header.Get("X-Linked-Etag"))
		if f.etag == "" {
			f.etag = normalizeETag(resp.Header.Get("ETag"))
		}
		if f.etag == "" || strings.ContainsAny(f.etag, "/\\") || f.etag == "." || f.etag == ".." {
			return f, fmt.Errorf("%s: the hub sent no usable ETag", name)
		}
		size := resp.Header.Get("X-Linked-Size")
		if size == "" {
			size = resp.Header.Get("Content-Length")
		}
		f.size, _ = strconv.ParseInt(size, 10, 64)
		if loc != "" && resp.StatusCode >= 300 {
			u, err := req.URL.Parse(loc)
			if err != nil {
				return f, err
			}
			f.url = u.String()
		}
		return f, nil
	}
}

func escapeSegments(name string) []string {
	parts := strings.Split(name, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return parts
}

// normalizeETag strips the weak prefix and quotes.
func normalizeETag(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "W/")
	return strings.Trim(s, `"`)
}

// fetch downloads f into blobs/<etag>, resuming blobs/<etag>.incomplete.
// It returns the bytes transferred.
// maxUndeclaredDownload bounds a file whose size the hub did not state
// (the Hub always states it: Content-Length, or X-Linked-Size for LFS), so
// a hostile HF_ENDPOINT cannot stream without end into the cache. A
// variable for tests.
var maxUndeclaredDownload int64 = 1 << 30

func (p *Puller) fetch(ctx context.Context, repoDir string, f remoteFile, progress func(int64)) (int64, error) {
	blob := filepath.Join(repoDir, "blobs", f.etag)
	if st, err := os.Stat(blob); err == nil && (f.size == 0 || st.Size() == f.size) {
		return 0, nil // already cached
	}
	inc := blob + ".incomplete"
	out, err := os.OpenFile(inc, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", f.name, err)
	}
	defer out.Close()
	have, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if f.size > 0 && have > f.size {
		have = 0
		out.Truncate(0)
	}
	var got int64
	if f.size == 0 || have < f.size {
		req, err := p.request(ctx, http.MethodGet, f.url)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Accept-Encoding", "identity")
		if have > 0 {
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
		}
		resp, err := p.client.Do(req)
		if err != nil {
			return 0, fmt.Errorf("download %s: %w", f.name, err)
		}
		defer resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusPartialContent && have > 0:
		case resp.StatusCode == http.StatusOK:
			// The server ignored Range: start over.
			have = 0
			if err := out.Truncate(0); err != nil {
				return 0, err
			}
			if _, err := out.Seek(0, io.SeekStart); err != nil {
				return 0, err
			}
		case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have == f.size:
		default:
			return 0, fmt.Errorf("download %s: %s", f.name, resp.Status)
		}
		progress(have)
		limit := f.size
		if limit <= 0 {
			limit = maxUndeclaredDownload
		}
		buf := make([]byte, 1<<20)
		for resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
			n, rerr := resp.Body.Read(buf)
			if have+got+int64(n) > limit {
				out.Close()
				os.Remove(inc) // what came is not the file: never resume it
				if f.size > 0 {
					return got, fmt.Errorf("download %s: the server sent more than the %d bytes it announced; stopped", f.name, f.size)
				}
				return got, fmt.Errorf("download %s: %s did not say how large the file is, and it sent more than %d MB; stopped (a hub sends the size of every file)", f.name, p.endpoint, maxUndeclaredDownload>>20)
			}
			if n > 0 {
				if _, err := out.Write(buf[:n]); err != nil {
					return got, fmt.Errorf("write %s: %w", inc, err)
				}
				got += int64(n)
				progress(have + got)
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				return got, fmt.Errorf("download %s: %w", f.name, rerr)
			}
		}
	}
	if err := out.Sync(); err != nil {
		return got, err
	}
	if err := checkDownload(inc, f); err != nil {
		os.Remove(inc) // a bad file must not be resumed
		return got, err
	}
	out.Close()
	if err := os.Rename(inc, blob); err != nil {
		return got, fmt.Errorf("finish %s: %w", f.name, err)
	}
	return got, nil
}

// checkDownload compares a finished download with its size and ETag: a
// sha256 ETag (LFS) or a git blob sha1 (small files) must match the
// content; other ETags are only size-checked.
func checkDownload(path string, f remoteFile) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if f.size > 0 && st.Size() != f.size {
		return fmt.Errorf("%s: downloaded %d bytes, the hub announced %d", f.name, st.Size(), f.size)
	}
	var h hash.Hash
	switch {
	case isSHA256(f.etag):
		h = sha256.New()
	case IsCommit(f.etag):
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", st.Size())
	default:
		return nil
	}
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	if _, err := io.Copy(h, in); err != nil {
		return err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(sum, f.etag) {
		return fmt.Errorf("%s: downloaded content hashes to %s, expected %s; the partial file was removed", f.name, sum, f.etag)
	}
	return nil
}

// linkSnapshotFile points snapshots/<commit>/<name> at ../../blobs/<etag>
// with a relative symlink (more ../ for nested names), as huggingface_hub.
func linkSnapshotFile(repoDir, commit, name, etag string) error {
	link := filepath.Join(repoDir, "snapshots", commit, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(link), filepath.Join(repoDir, "blobs", etag))
	if err != nil {
		return err
	}
	if cur, err := os.Readlink(link); err == nil && cur == rel {
		return nil
	}
	tmp := link + ".hark-tmp"
	os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		return fmt.Errorf("link %s: %w", name, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("link %s: %w", name, err)
	}
	return nil
}

func writeFileAtomic(p string, b []byte) error {
	tmp := p + ".hark-tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
