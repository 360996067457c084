package library

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A hostile HF_ENDPOINT that never says how big a file is, and never stops
// sending it, must not fill the disk; nor may one that sends more than it
// announced.
func TestPullBoundsWhatTheHubSends(t *testing.T) {
	saved := maxUndeclaredDownload
	maxUndeclaredDownload = 1 << 20
	defer func() { maxUndeclaredDownload = saved }()
	for _, announce := range []string{"", "1000"} {
		t.Run("announced "+announce, func(t *testing.T) {
			chunk := make([]byte, 64<<10)
			hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/api/models/") {
					json.NewEncoder(w).Encode(map[string]any{"sha": commitA, "siblings": []map[string]string{{"rfilename": "big.bin"}}})
					return
				}
				w.Header().Set("X-Repo-Commit", commitA)
				w.Header().Set("ETag", `"`+gitBlobSHA1([]byte("x"))+`"`)
				if announce != "" {
					w.Header().Set("X-Linked-Size", announce)
				}
				if r.Method == http.MethodHead {
					return
				}
				for r.Context().Err() == nil { // for ever, with no length
					if _, err := w.Write(chunk); err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			}))
			defer hub.Close()
			cache := t.TempDir()
			env := func(k string) string {
				if k == "HF_ENDPOINT" {
					return hub.URL
				}
				return ""
			}
			p := NewPuller(PullOptions{Cache: cache, Getenv: env})
			_, err := p.Pull(context.Background(), "org/endless", "main", nil)
			if err == nil || !strings.Contains(err.Error(), "big.bin") || !strings.Contains(err.Error(), "stopped") {
				t.Fatalf("err %v", err)
			}
			var total int64
			filepath.Walk(cache, func(_ string, fi os.FileInfo, _ error) error {
				if fi != nil && fi.Mode().IsRegular() {
					total += fi.Size()
				}
				return nil
			})
			if total > 2<<20 {
				t.Fatalf("%d bytes written to the cache", total)
			}
		})
	}
}
