package app

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"hark/library/store"
)

func newTestApp(t *testing.T) (*App, *httptest.Server) {
	t.Helper()
	ui := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>Hark</title>")}, "assets/app.js": {Data: []byte("console.log(1)")}}
	a, err := New(Options{DataDir: t.TempDir(), UI: ui, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); a.Close() })
	return a, srv
}

func do(t *testing.T, method, url string, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	// Scripts mark state changes as their own (see guard); a test of the
	// guard passes "X-Hark": "" to leave it out.
	req.Header.Set("X-Hark", "test")
	for k, v := range hdr {
		if k == "X-Hark" && v == "" {
			req.Header.Del(k)
			continue
		}
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestSettingsAPI(t *testing.T) {
	_, srv := newTestApp(t)
	code, body := do(t, "GET", srv.URL+"/api/settings", "", nil)
	if code != 200 || !strings.Contains(body, `"backend":"auto"`) {
		t.Fatalf("%d %s", code, body)
	}
	code, body = do(t, "PUT", srv.URL+"/api/settings", `{"modelRoots":["/m"],"backend":"cpu"}`, map[string]string{"Origin": srv.URL})
	if code != 200 || !strings.Contains(body, `"/m"`) {
		t.Fatalf("%d %s", code, body)
	}
	code, body = do(t, "PUT", srv.URL+"/api/settings", `{"backend":"quantum"}`, nil)
	if code != 400 || !strings.Contains(body, "quantum") {
		t.Fatalf("bad value: %d %s", code, body)
	}
	code, body = do(t, "PUT", srv.URL+"/api/settings", `{"backend":"metal"}`, nil)
	if code != 400 || !strings.Contains(body, "not available in this build") {
		t.Fatalf("unavailable backend: %d %s", code, body)
	}
	code, body = do(t, "GET", srv.URL+"/api/info", "", nil)
	if code != 200 || !strings.Contains(body, `"backend":{"name":"cpu"`) || !strings.Contains(body, `"from":"setting"`) {
		t.Fatalf("info: %d %s", code, body)
	}
	code, body = do(t, "PUT", srv.URL+"/api/settings", `{"backend":`, nil)
	if code != 400 || !strings.Contains(body, "bad JSON") {
		t.Fatalf("bad json: %d %s", code, body)
	}
	code, _ = do(t, "PUT", srv.URL+"/api/settings", `{"modelRoots":["`+strings.Repeat("x", maxBodyBytes)+`"]}`, nil)
	if code != http.StatusRequestEntityTooLarge {
		t.Fatalf("huge body: %d", code)
	}
	code, body = do(t, "GET", srv.URL+"/api/nope", "", nil)
	if code != 404 || !strings.Contains(body, "no API route") {
		t.Fatalf("%d %s", code, body)
	}
}

func TestGuardRejectsForeignOriginAndHost(t *testing.T) {
	_, srv := newTestApp(t)
	cases := []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"same origin", map[string]string{"Origin": srv.URL}, 200},
		{"no origin", nil, 200},
		{"localhost host", map[string]string{"Host": "localhost:1"}, 200},
		{"foreign origin", map[string]string{"Origin": "http://evil.example"}, 403},
		{"origin on another port", map[string]string{"Origin": "http://127.0.0.1:1"}, 403},
		{"null origin", map[string]string{"Origin": "null"}, 403},
		{"rebinding host", map[string]string{"Host": "evil.example"}, 403},
		{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
	}
	for _, c := range cases {
		code, body := do(t, "GET", srv.URL+"/api/settings", "", c.hdr)
		if code != c.want {
			t.Errorf("%s: status %d (%s), want %d", c.name, code, body, c.want)
		}
	}
}

func TestUIFallsBackToIndex(t *testing.T) {
	_, srv := newTestApp(t)
	code, body := do(t, "GET", srv.URL+"/settings/deep", "", nil)
	if code != 200 || !strings.Contains(body, "<title>Hark") {
		t.Fatalf("%d %s", code, body)
	}
	code, body = do(t, "GET", srv.URL+"/assets/app.js", "", nil)
	if code != 200 || !strings.Contains(body, "console.log") {
		t.Fatalf("%d %s", code, body)
	}
}

func TestPanicInRequestIsAnsweredAndLogged(t *testing.T) {
	a, _ := newTestApp(t)
	// The app's own routes behind one that panics, under the same guard.
	r := &router{mux: http.NewServeMux(), log: a.Log}
	r.handle("GET /api/test-panic", func(http.ResponseWriter, *http.Request) error { panic("boom") })
	r.mux.Handle("/", a.routes())
	srv := httptest.NewServer(recoverPanics(a.Log, r.mux))
	defer srv.Close()
	code, body := do(t, "GET", srv.URL+"/api/test-panic", "", nil)
	if code != 500 || !strings.Contains(body, "boom") {
		t.Fatalf("%d %s", code, body)
	}
	if code, _ := do(t, "GET", srv.URL+"/api/settings", "", nil); code != 200 {
		t.Fatal("server did not survive the panic")
	}
}

func TestEventsStreamAndJobs(t *testing.T) {
	a, srv := newTestApp(t)
	res, err := http.Get(srv.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	lines := bufio.NewScanner(res.Body)
	lines.Scan() // ": connected"
	release := make(chan struct{})
	job := a.Jobs.Start("test", "counting", "items", func(ctx context.Context, p Progress) (any, error) {
		p(1, 2, "half")
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return nil, errors.New("never")
	})
	if code, _ := do(t, "DELETE", srv.URL+"/api/jobs/"+job.ID, "", nil); code != 204 {
		t.Fatalf("cancel: %d", code)
	}
	if code, _ := do(t, "DELETE", srv.URL+"/api/jobs/job-999", "", nil); code != 404 {
		t.Fatalf("cancel missing: %d", code)
	}
	deadline := time.After(10 * time.Second)
	got := make(chan string)
	go func() {
		for lines.Scan() {
			if strings.Contains(lines.Text(), `"state":"cancelled"`) {
				got <- lines.Text()
				return
			}
		}
	}()
	select {
	case <-got:
	case <-deadline:
		t.Fatal("no cancelled job event on the stream")
	}
	close(release)
}

func TestSecondInstanceIsRefused(t *testing.T) {
	dir := t.TempDir()
	a, err := New(Options{DataDir: dir, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(Options{DataDir: dir, Stderr: io.Discard})
	if !errors.Is(err, ErrAlreadyRunning) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("want ErrAlreadyRunning naming %s, got %v", dir, err)
	}
	a.Close()
	b, err := New(Options{DataDir: dir, Stderr: io.Discard})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	b.Close()
}

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:80", "example.com:80"} {
		if ln, err := Listen(addr); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) accepted a non-loopback address", addr)
		}
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}

func TestLogFileIsCapped(t *testing.T) {
	dir := t.TempDir()
	f, err := openCappedFile(dir+"/x.log", 1000)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("a", 99) + "\n"
	for i := 0; i < 50; i++ {
		f.Write([]byte(line))
	}
	f.Close()
	for _, p := range []string{dir + "/x.log", dir + "/x.log.1"} {
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 1000 || len(b) == 0 {
			t.Errorf("%s: %d bytes, %v", p, len(b), err)
		}
	}
}

// LM Studio's models folder is read in place by default when it exists.
func TestLMStudioFolderIsARoot(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if roots := LibraryRoots(store.Settings{}); len(roots) != 1 {
		t.Fatalf("roots without LM Studio: %+v", roots)
	}
	lms := filepath.Join(home, ".lmstudio", "models")
	os.MkdirAll(lms, 0o755)
	roots := LibraryRoots(store.Settings{ModelRoots: []string{lms}})
	if len(roots) != 2 || roots[1].Path != lms || roots[1].Origin != "lmstudio" {
		t.Fatalf("roots: %+v", roots)
	}
}
