package librarytest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Hub is a fake Hugging Face Hub on 127.0.0.1 for one repo at one commit:
// the revision API and resolve URLs answering HEAD with X-Repo-Commit,
// ETag, X-Linked-Etag and X-Linked-Size as the Hub does. GETs honour
// Range. Safetensors files can be served slowly (Slow), so a test can
// interrupt a download half-way, and every Range header asked is kept.
type Hub struct {
	URL    string
	Repo   string
	Commit string
	Files  map[string][]byte

	srv *httptest.Server
	mu  sync.Mutex
	// Slow sends safetensors bodies in chunks of this many bytes with a
	// pause between them (0: all at once).
	slow   int
	ranges []string
}

// NewHub starts a fake Hub serving files as repo at commit.
func NewHub(tb testing.TB, repo, commit string, files map[string][]byte) *Hub {
	h := &Hub{Repo: repo, Commit: commit, Files: files}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	h.URL = h.srv.URL
	tb.Cleanup(h.srv.Close)
	return h
}

// SetSlow makes weight downloads trickle in chunks of n bytes (0: off).
func (h *Hub) SetSlow(n int) {
	h.mu.Lock()
	h.slow = n
	h.mu.Unlock()
}

// Ranges returns the Range headers of every weight GET so far ("" when
// none was sent).
func (h *Hub) Ranges() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ranges...)
}

// Sha256 is the hex sha256 of b: the blob name of an LFS file.
func Sha256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (h *Hub) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api/models/"+h.Repo+"/revision/main" || r.URL.Path == "/api/models/"+h.Repo+"/revision/"+h.Commit {
		names := make([]string, 0, len(h.Files))
		for n := range h.Files {
			names = append(names, n)
		}
		sort.Strings(names) // config.json arrives before the weights
		sib := make([]map[string]string, len(names))
		for i, n := range names {
			sib[i] = map[string]string{"rfilename": n}
		}
		json.NewEncoder(w).Encode(map[string]any{"id": h.Repo, "sha": h.Commit, "siblings": sib})
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/"+h.Repo+"/resolve/")
	if !ok {
		if r.URL.Path == "/" || r.URL.Path == "/api/whoami-v2" {
			w.WriteHeader(http.StatusOK) // reachability probes
			return
		}
		http.NotFound(w, r)
		return
	}
	rev, name, _ := strings.Cut(rest, "/")
	body, ok := h.Files[name]
	if !ok || (rev != h.Commit && rev != "main") {
		http.NotFound(w, r)
		return
	}
	lfs := strings.HasSuffix(name, ".safetensors")
	w.Header().Set("X-Repo-Commit", h.Commit)
	w.Header().Set("ETag", `"`+Sha256(body)+`"`)
	if lfs {
		w.Header().Set("X-Linked-Etag", `"`+Sha256(body)+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(body)))
	}
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		return
	}
	start := 0
	h.mu.Lock()
	slow := h.slow
	if lfs {
		h.ranges = append(h.ranges, r.Header.Get("Range"))
	}
	h.mu.Unlock()
	if rg := r.Header.Get("Range"); rg != "" {
		if _, err := fmt.Sscanf(rg, "bytes=%d-", &start); err != nil || start < 0 || start > len(body) {
			http.Error(w, "bad range", http.StatusRequestedRangeNotSatisfiable)
			return
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(body)-1, len(body)))
		w.Header().Set("Content-Length", strconv.Itoa(len(body)-start))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	body = body[start:]
	if !lfs || slow <= 0 {
		w.Write(body)
		return
	}
	for len(body) > 0 {
		n := min(slow, len(body))
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		body = body[n:]
		select {
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}
