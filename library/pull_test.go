package library

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeHub speaks the Hub's endpoints: the revision API, and resolve URLs
// answering HEAD with X-Repo-Commit / ETag / X-Linked-Etag /
// X-Linked-Size, small files served directly and LFS files redirected to a
// CDN on another host that honours Range.
type fakeHub struct {
	t       *testing.T
	hub     *httptest.Server
	cdn     *httptest.Server
	repo    string
	commit  string
	files   map[string][]byte
	private string // token required, if set

	mu         sync.Mutex
	ranges     []string
	gets       map[string]int
	authOnCDN  bool
	corruptCDN bool
	stallAfter int // CDN stops after this many bytes, then blocks
	stall      chan struct{}
}

func isLFS(name string) bool { return strings.HasSuffix(name, ".safetensors") }

func newFakeHub(t *testing.T, repo, commit string, files map[string][]byte) *fakeHub {
	h := &fakeHub{t: t, repo: repo, commit: commit, files: files, gets: map[string]int{}, stall: make(chan struct{})}
	h.cdn = httptest.NewServer(http.HandlerFunc(h.serveCDN))
	h.hub = httptest.NewServer(http.HandlerFunc(h.serveHub))
	t.Cleanup(func() { close(h.stall); h.hub.Close(); h.cdn.Close() })
	return h
}

func (h *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	if h.private != "" && r.Header.Get("Authorization") != "Bearer "+h.private {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	// A renamed repo: the Hub redirects the old name with relative URLs.
	if rest, ok := strings.CutPrefix(r.URL.Path, "/old-org/old-name/"); ok {
		w.Header().Set("Location", "/"+h.repo+"/"+rest)
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/api/models/old-org/old-name/"); ok {
		w.Header().Set("Location", "/api/models/"+h.repo+"/"+rest)
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	if h.serveSearch(w, r) {
		return
	}
	revPrefix := "/api/models/" + h.repo + "/revision/"
	if rev, ok := strings.CutPrefix(r.URL.EscapedPath(), revPrefix); ok {
		if rev != "main" && rev != h.commit && rev != "refs%2Fpr%2F1" {
			http.Error(w, "revision not found", http.StatusNotFound)
			return
		}
		var sib []map[string]string
		for name := range h.files {
			sib = append(sib, map[string]string{"rfilename": name})
		}
		json.NewEncoder(w).Encode(map[string]any{"id": h.repo, "sha": h.commit, "siblings": sib})
		return
	}
	prefix := "/" + h.repo + "/resolve/"
	rest, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	rev, name, _ := strings.Cut(rest, "/")
	b, ok := h.files[name]
	if !ok || (rev != h.commit && rev != "main") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("X-Repo-Commit", h.commit)
	if isLFS(name) {
		sum := sha256Hex(b)
		w.Header().Set("X-Linked-Etag", `"`+sum+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(b)))
		w.Header().Set("ETag", `"`+gitBlobSHA1([]byte("lfs pointer"))+`"`)
		w.Header().Set("Location", h.cdn.URL+"/blob/"+sum)
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("ETag", `W/"`+gitBlobSHA1(b)+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method == http.MethodGet {
		h.mu.Lock()
		h.gets[name]++
		h.mu.Unlock()
		w.Write(b)
	}
}

func (h *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	if r.Header.Get("Authorization") != "" {
		h.authOnCDN = true
	}
	h.ranges = append(h.ranges, r.Header.Get("Range"))
	corrupt, stallAfter := h.corruptCDN, h.stallAfter
	h.mu.Unlock()
	sum := strings.TrimPrefix(r.URL.Path, "/blob/")
	var body []byte
	for name, b := range h.files {
		if isLFS(name) && sha256Hex(b) == sum {
			body = b
			h.mu.Lock()
			h.gets[name]++
			h.mu.Unlock()
		}
	}
	if body == nil {
		http.NotFound(w, r)
		return
	}
	if corrupt {
		body = append([]byte{body[0] ^ 0xff}, body[1:]...)
	}
	start := 0
	if rg := r.Header.Get("Range"); rg != "" {
		fmt.Sscanf(rg, "bytes=%d-", &start)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(body)-1, len(body)))
		w.Header().Set("Content-Length", strconv.Itoa(len(body)-start))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	if stallAfter > 0 {
		w.Write(body[start:stallAfter])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-h.stall:
		}
		return
	}
	w.Write(body[start:])
}

func (h *fakeHub) env(token string) func(string) string {
	return func(k string) string {
		switch k {
		case "HF_ENDPOINT":
			return h.hub.URL
		case "HF_TOKEN":
			return token
		}
		return ""
	}
}

func pullFiles(t *testing.T) map[string][]byte {
	weights := safetensorsBytes(map[string][]int64{"w": {128, 64}}, "F32")
	return map[string][]byte{
		"config.json":          []byte(`{"model_type":"llama","max_position_embeddings":2048}`),
		"model.safetensors":    weights,
		"tokenizer/vocab.json": []byte(`{"a":1}`),
	}
}

func TestPullWritesAReadableCache(t *testing.T) {
	files := pullFiles(t)
	h := newFakeHub(t, "org/tiny", commitA, files)
	cache := t.TempDir()
	p := NewPuller(PullOptions{Cache: cache, Getenv: h.env("")})
	var last, total int64
	res, err := p.Pull(context.Background(), "org/tiny", "main", func(d, tot int64, _ string) { last, total = d, tot })
	must(t, err)
	var want int64
	for _, b := range files {
		want += int64(len(b))
	}
	if res.Commit != commitA || res.Files != 3 || res.Size != want || res.Downloaded != want || last != want || total != want {
		t.Fatalf("result %+v, progress %d/%d", res, last, total)
	}
	repoDir := filepath.Join(cache, "models--org--tiny")
	// The layout huggingface_hub writes.
	if b, _ := os.ReadFile(filepath.Join(repoDir, "refs", "main")); string(b) != commitA {
		t.Errorf("refs/main = %q", b)
	}
	link, _ := os.Readlink(filepath.Join(repoDir, "snapshots", commitA, "model.safetensors"))
	if link != "../../blobs/"+sha256Hex(files["model.safetensors"]) {
		t.Errorf("weights link %q", link)
	}
	link, _ = os.Readlink(filepath.Join(repoDir, "snapshots", commitA, "tokenizer", "vocab.json"))
	if link != "../../../blobs/"+gitBlobSHA1(files["tokenizer/vocab.json"]) {
		t.Errorf("nested link %q", link)
	}
	h.mu.Lock()
	if h.authOnCDN {
		t.Error("token sent to the CDN host")
	}
	h.mu.Unlock()
	// The scanner reads it back, and verify agrees with the hashes.
	l := testLib(t, cache)
	scanAll(t, l)
	m, err := l.Get(context.Background(), "org/tiny")
	must(t, err)
	if m.Fingerprint != res.Fingerprint || m.Params != 128*64 || m.ContextLength != 2048 || len(m.Problems) != 0 || !m.Supported || m.Size != want {
		t.Fatalf("scanned %+v", m)
	}
	v, err := l.Verify(context.Background(), "org/tiny", nil)
	if err != nil || !v.OK || v.Checked != 3 {
		t.Fatalf("verify %+v %v", v, err)
	}
	// A second pull downloads nothing; a pull by commit writes no new ref.
	res, err = p.Pull(context.Background(), "org/tiny", commitA, nil)
	if err != nil || res.Downloaded != 0 {
		t.Fatalf("re-pull %+v %v", res, err)
	}
	// A PR revision lands in refs/refs/pr/1 as huggingface_hub does.
	if _, err := p.Pull(context.Background(), "org/tiny", "refs/pr/1", nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(repoDir, "refs", "refs", "pr", "1")); string(b) != commitA {
		t.Errorf("refs/refs/pr/1 = %q", b)
	}
}

func TestPullResumesWithRange(t *testing.T) {
	files := pullFiles(t)
	h := newFakeHub(t, "org/tiny", commitA, files)
	cache := t.TempDir()
	w := files["model.safetensors"]
	blobs := filepath.Join(cache, "models--org--tiny", "blobs")
	must(t, os.MkdirAll(blobs, 0o755))
	half := len(w) / 2
	must(t, os.WriteFile(filepath.Join(blobs, sha256Hex(w)+".incomplete"), w[:half], 0o644))
	p := NewPuller(PullOptions{Cache: cache, Getenv: h.env("")})
	res, err := p.Pull(context.Background(), "org/tiny", "main", nil)
	must(t, err)
	h.mu.Lock()
	ranges := h.ranges
	h.mu.Unlock()
	if len(ranges) != 1 || ranges[0] != fmt.Sprintf("bytes=%d-", half) {
		t.Fatalf("ranges %q", ranges)
	}
	var want int64
	for _, b := range files {
		want += int64(len(b))
	}
	if res.Downloaded != want-int64(half) {
		t.Fatalf("downloaded %d, want %d", res.Downloaded, want-int64(half))
	}
	got, _ := os.ReadFile(filepath.Join(blobs, sha256Hex(w)))
	if string(got) != string(w) {
		t.Fatal("resumed blob differs")
	}
}

func TestPullRejectsCorruptDownload(t *testing.T) {
	h := newFakeHub(t, "org/tiny", commitA, pullFiles(t))
	h.corruptCDN = true
	cache := t.TempDir()
	_, err := NewPuller(PullOptions{Cache: cache, Getenv: h.env("")}).Pull(context.Background(), "org/tiny", "main", nil)
	if err == nil || !strings.Contains(err.Error(), "hashes to") {
		t.Fatalf("corrupt download: %v", err)
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "models--org--tiny", "blobs", "*"))
	for _, m := range matches {
		if strings.HasPrefix(filepath.Base(m), sha256Hex(h.files["model.safetensors"])) {
			t.Fatalf("corrupt blob left: %s", m)
		}
	}
}

func TestPullTokenAndErrors(t *testing.T) {
	h := newFakeHub(t, "org/tiny", commitA, pullFiles(t))
	h.private = "s3cret"
	cache := t.TempDir()
	_, err := NewPuller(PullOptions{Cache: cache, Getenv: h.env("")}).Pull(context.Background(), "org/tiny", "main", nil)
	if err == nil || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Fatalf("no token: %v", err)
	}
	if _, err := NewPuller(PullOptions{Cache: cache, Getenv: h.env("s3cret")}).Pull(context.Background(), "org/tiny", "main", nil); err != nil {
		t.Fatalf("with token: %v", err)
	}
	if _, err := NewPuller(PullOptions{Cache: cache, Getenv: h.env("s3cret")}).Pull(context.Background(), "org/tiny", "nope", nil); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("missing revision: %v", err)
	}
	for _, bad := range []string{"", "a/b/c", "../x", "org/repo@", "a b/c"} {
		if _, _, err := ParsePullRef(bad); err == nil {
			t.Errorf("ParsePullRef(%q) accepted", bad)
		}
	}
	if r, v, err := ParsePullRef("org/x@refs/pr/1"); err != nil || r != "org/x" || v != "refs/pr/1" {
		t.Errorf("ParsePullRef: %s %s %v", r, v, err)
	}
}

func TestPullCancelLeavesResumableBlob(t *testing.T) {
	h := newFakeHub(t, "org/tiny", commitA, pullFiles(t))
	h.stallAfter = 1000
	cache := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := NewPuller(PullOptions{Cache: cache, Getenv: h.env("")}).Pull(ctx, "org/tiny", "main", func(d, tot int64, name string) {
			if name == "model.safetensors" && d > 0 {
				cancel()
			}
		})
		errc <- err
	}()
	if err := <-errc; err == nil {
		t.Fatal("cancelled pull succeeded")
	}
	inc := filepath.Join(cache, "models--org--tiny", "blobs", sha256Hex(h.files["model.safetensors"])+".incomplete")
	st, err := os.Stat(inc)
	if err != nil || st.Size() == 0 {
		t.Fatalf("no resumable partial blob: %v", err)
	}
	h.mu.Lock()
	h.stallAfter = 0
	h.mu.Unlock()
	if _, err := NewPuller(PullOptions{Cache: cache, Getenv: h.env("")}).Pull(context.Background(), "org/tiny", "main", nil); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	last := h.ranges[len(h.ranges)-1]
	h.mu.Unlock()
	if last != fmt.Sprintf("bytes=%d-", st.Size()) {
		t.Fatalf("resume range %q after %d bytes", last, st.Size())
	}
}

func TestHubTokenSources(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "token"), []byte("from-file\n"), 0o600))
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HF_TOKEN": "from-env", "HF_HOME": dir}, "from-env"},
		{map[string]string{"HF_HOME": dir}, "from-file"},
		{map[string]string{"HF_TOKEN_PATH": filepath.Join(dir, "token")}, "from-file"},
		{map[string]string{"HOME": dir}, ""},
	}
	for _, c := range cases {
		if got := hubToken(env(c.env)); got != c.want {
			t.Errorf("%v: token %q, want %q", c.env, got, c.want)
		}
	}
}

func TestPullFollowsRenamedRepo(t *testing.T) {
	h := newFakeHub(t, "org/tiny", commitA, pullFiles(t))
	cache := t.TempDir()
	res, err := NewPuller(PullOptions{Cache: cache, Getenv: h.env("")}).Pull(context.Background(), "old-org/old-name", "main", nil)
	if err != nil || res.Files != 3 {
		t.Fatalf("renamed repo: %+v %v", res, err)
	}
	// Stored under the name asked for, as huggingface_hub does.
	if _, err := os.Stat(filepath.Join(cache, "models--old-org--old-name", "snapshots", commitA, "config.json")); err != nil {
		t.Fatal(err)
	}
}

// A download another process holds the huggingface_hub lock for is waited
// for, not written concurrently.
func TestPullWaitsForTheBlobLock(t *testing.T) {
	files := pullFiles(t)
	h := newFakeHub(t, "org/tiny", commitA, files)
	cache := t.TempDir()
	unlock, err := lockBlob(context.Background(), cache, RepoFolder("org/tiny"), sha256Hex(files["model.safetensors"]), func() {})
	must(t, err)
	waiting := make(chan struct{})
	var once sync.Once
	errc := make(chan error, 1)
	go func() {
		_, err := NewPuller(PullOptions{Cache: cache, Getenv: h.env("")}).Pull(context.Background(), "org/tiny", "main", func(_, _ int64, msg string) {
			if strings.HasPrefix(msg, "waiting for another download") {
				once.Do(func() { close(waiting) })
			}
		})
		errc <- err
	}()
	<-waiting
	select {
	case err := <-errc:
		t.Fatalf("pull finished while the lock was held: %v", err)
	default:
	}
	unlock()
	must(t, <-errc)
	if _, err := os.Stat(filepath.Join(cache, ".locks", "models--org--tiny", sha256Hex(files["model.safetensors"])+".lock")); err != nil {
		t.Fatal("lock file not where huggingface_hub keeps it")
	}
}
