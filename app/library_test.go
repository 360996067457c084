package app

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"hark/library"
	"hark/library/librarytest"
	"hark/mlx/mlxtest"
	"hark/models/profile"
)

const testCommit = "0123456789abcdef0123456789abcdef01234567"

// putSnapshot copies files into an HF cache layout at testCommit.
func putSnapshot(t testing.TB, cache, repo string, files map[string][]byte) {
	t.Helper()
	librarytest.WriteSnapshot(t, cache, repo, testCommit, files)
}

func storiesFiles(t *testing.T) map[string][]byte {
	dir := mlxtest.Assets(t, "models", "stories260K", "hf")
	out := map[string][]byte{}
	for _, n := range []string{"config.json", "model.safetensors", "tokenizer.json"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = b
	}
	return out
}

func libraryApp(t *testing.T) (*App, *httptest.Server, string) {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	a, err := New(Options{DataDir: t.TempDir(), NoLock: true, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); a.Close() })
	return a, srv, cache
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	readJSON(t, url, res, v)
	return res.StatusCode
}

func postJSON(t *testing.T, url, body string, v any) (int, string) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(readJSON(t, url, res, v))
}

// readJSON reads and closes res's body, decoding it into v when v is not
// nil and the status is 200, and returns it.
func readJSON(t *testing.T, url string, res *http.Response, v any) []byte {
	t.Helper()
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if v != nil && res.StatusCode == 200 {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v in %s", url, err, b)
		}
	}
	return b
}

// A model copied into the cache while the app runs shows up as a library
// event on the SSE stream and then in GET /api/models.
func TestLibraryLiveOverHTTP(t *testing.T) {
	a, srv, cache := libraryApp(t)
	res, err := http.Get(srv.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			events <- sc.Text()
		}
		close(events)
	}()
	// Let the startup scan land first so its event does not count.
	deadline := time.After(10 * time.Second)
	for a.library().Status().LastScan.IsZero() {
		select {
		case <-deadline:
			t.Fatal("no startup scan")
		case <-time.After(10 * time.Millisecond):
		}
	}
	putSnapshot(t, cache, "karpathy/stories260K", storiesFiles(t))
	var models []library.Model
	for len(models) == 0 {
		select {
		case line, ok := <-events:
			if !ok {
				t.Fatal("event stream ended")
			}
			if line == "event: library" {
				getJSON(t, srv.URL+"/api/models", &models)
			}
		case <-deadline:
			t.Fatal("no library event for the new model")
		}
	}
	m := models[0]
	if m.ID != "hf:karpathy/stories260K@"+testCommit || m.Kind != "chat" || m.Params == 0 || m.FileCount != 3 {
		t.Fatalf("model %+v", m)
	}
	var d ModelDetails
	if code := getJSON(t, srv.URL+"/api/models/"+url.PathEscape(m.ID), &d); code != 200 || len(d.Files) != 3 || !strings.Contains(string(d.Config), `"llama"`) {
		t.Fatalf("show %d %+v", code, d)
	}
	if code := getJSON(t, srv.URL+"/api/models/nope%2Fnope", nil); code != 404 {
		t.Fatalf("missing model: %d", code)
	}
	var st library.Status
	getJSON(t, srv.URL+"/api/models/status", &st)
	if !st.Watching || len(st.Roots) == 0 || st.Roots[0].Path != cache {
		t.Fatalf("status %+v", st)
	}

	// Verify runs as a job with progress and a result.
	var job Job
	if code, body := postJSON(t, srv.URL+"/api/models/karpathy%2Fstories260K/verify", "", &job); code != 200 {
		t.Fatalf("verify %d %s", code, body)
	}
	for job.State == "running" {
		time.Sleep(10 * time.Millisecond)
		job, _ = a.Jobs.Get(job.ID)
	}
	vr, ok := job.Result.(library.VerifyResult)
	if job.State != "done" || !ok || !vr.OK || vr.Checked != 3 || job.Done != job.Total || job.Total == 0 {
		t.Fatalf("verify job %+v", job)
	}

	// Open folder goes through the seam (no file manager in tests).
	var opened string
	orig := openFolder
	openFolder = func(p string) error { opened = p; return nil }
	t.Cleanup(func() { openFolder = orig })
	if code, body := postJSON(t, srv.URL+"/api/models/"+url.PathEscape(m.Path)+"/open", "", nil); code != 200 || opened != m.Path {
		t.Fatalf("open %d %s %q", code, body, opened)
	}

	// Delete: a dry run for the confirmation, then the real thing.
	var dr library.DeleteResult
	if code, body := postJSON(t, srv.URL+"/api/models/delete", `{"id":"karpathy/stories260K","dryRun":true}`, &dr); code != 200 || dr.Freed == 0 || !dr.DryRun {
		t.Fatalf("dry run %d %s", code, body)
	}
	want := dr.Freed
	if code, body := postJSON(t, srv.URL+"/api/models/delete", `{"id":"karpathy/stories260K"}`, &dr); code != 200 || dr.Freed != want {
		t.Fatalf("delete %d %s", code, body)
	}
	getJSON(t, srv.URL+"/api/models", &models)
	if len(models) != 0 {
		t.Fatalf("after delete: %+v", models)
	}
	if code, _ := postJSON(t, srv.URL+"/api/models/delete", `{"id":"karpathy/stories260K"}`, nil); code != 404 {
		t.Fatalf("second delete: %d", code)
	}
}

// Adding a root in Settings rescans it.
func TestLibraryFollowsSettings(t *testing.T) {
	a, srv, _ := libraryApp(t)
	extra := t.TempDir()
	dir := filepath.Join(extra, "org", "model")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type":"whisper"}`), 0o644)
	body, _ := json.Marshal(map[string]any{"modelRoots": []string{extra}, "backend": "auto"})
	req, _ := http.NewRequest("PUT", srv.URL+"/api/settings", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("save settings: %v %v", err, res.Status)
	}
	res.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ms, err := a.Service.ListModels()
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 1 && ms[0].Repo == "org/model" && ms[0].Kind == "speech" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("extra root not scanned: %+v", ms)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPullJobAgainstFakeHub(t *testing.T) {
	a, srv, cache := libraryApp(t)
	cfg := []byte(`{"model_type":"llama"}`)
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/models/o/r/revision/main":
			fmt.Fprintf(w, `{"sha":%q,"siblings":[{"rfilename":"config.json"}]}`, testCommit)
		case "/o/r/resolve/" + testCommit + "/config.json":
			sum := sha256.Sum256(cfg)
			w.Header().Set("X-Repo-Commit", testCommit)
			w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
			w.Header().Set("Content-Length", fmt.Sprint(len(cfg)))
			if r.Method == "GET" {
				w.Write(cfg)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer hub.Close()
	t.Setenv("HF_ENDPOINT", hub.URL)
	var job Job
	if code, body := postJSON(t, srv.URL+"/api/models/pull", `"o/r"`, &job); code != 200 {
		t.Fatalf("pull %d %s", code, body)
	}
	for job.State == "running" {
		time.Sleep(10 * time.Millisecond)
		job, _ = a.Jobs.Get(job.ID)
	}
	if job.State != "done" {
		t.Fatalf("pull job %+v", job)
	}
	m, err := a.Service.GetModel("o/r")
	if err != nil || m.Path != filepath.Join(cache, "models--o--r", "snapshots", testCommit) {
		t.Fatalf("pulled model %+v %v", m, err)
	}
	if code, _ := postJSON(t, srv.URL+"/api/models/pull", `{"repo":"../etc"}`, nil); code != 400 {
		t.Fatalf("bad repo: %d", code)
	}
}

// When watches run out the API says so (and what it does instead).
func TestLibraryStatusReportsWatchLimit(t *testing.T) {
	t.Setenv("HARK_MAX_WATCHES", "1")
	cache := t.TempDir()
	os.MkdirAll(filepath.Join(cache, "models--o--r", "snapshots"), 0o755)
	t.Setenv("HF_HUB_CACHE", cache)
	a, err := New(Options{DataDir: t.TempDir(), NoLock: true, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	defer func() { srv.Close(); a.Close() }()
	var st library.Status
	getJSON(t, srv.URL+"/api/models/status", &st)
	if st.Watching || st.Reason != "watch limit reached (HARK_MAX_WATCHES=1); rescanning every 30s" {
		t.Fatalf("status %+v", st)
	}
	t.Setenv("HARK_MAX_WATCHES", "lots")
	if _, err := New(Options{DataDir: t.TempDir(), NoLock: true, Stderr: io.Discard}); err == nil || !strings.Contains(err.Error(), "HARK_MAX_WATCHES") {
		t.Fatalf("bad HARK_MAX_WATCHES: %v", err)
	}
}

// Every starter is a model_type that a family Hark registers runs, of the
// kind the shelf says.
func TestStarterShelfIsSupported(t *testing.T) {
	starters, err := library.Starters()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range starters {
		found := false
		for _, f := range profile.Families() {
			if slices.Contains(f.ModelTypes, s.ModelType) {
				found = true
				if f.Kind != s.Kind {
					t.Errorf("%s: kind %s, but %s models are %s", s.Repo, s.Kind, s.ModelType, f.Kind)
				}
			}
		}
		if !found {
			t.Errorf("%s: no registered family runs model_type %s", s.Repo, s.ModelType)
		}
	}
}

// A default model must be in the Library and of the right kind.
func TestDefaultModelsAreChecked(t *testing.T) {
	a, _, _ := libraryApp(t)
	extra := t.TempDir()
	dir := filepath.Join(extra, "org", "whisper")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type":"whisper"}`), 0o644)
	s, err := a.Service.GetSettings()
	if err != nil {
		t.Fatal(err)
	}
	s.ModelRoots = []string{extra}
	if s, err = a.Service.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
	// The new root is scanned once the library follows the settings.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m, err := a.Service.GetModel(dir); err == nil && m.Kind == "speech" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the extra root was not scanned")
		}
		time.Sleep(20 * time.Millisecond)
	}
	bad := s
	bad.DefaultChatModel = "nope/nothing"
	if _, err := a.Service.SaveSettings(bad); err == nil || !strings.Contains(err.Error(), "nope/nothing") {
		t.Fatalf("an unknown default chat model was saved: %v", err)
	}
	bad = s
	bad.DefaultChatModel = dir
	if _, err := a.Service.SaveSettings(bad); err == nil || !strings.Contains(err.Error(), "not a chat model") {
		t.Fatalf("a speech model was saved as the chat default: %v", err)
	}
	good := s
	good.DefaultSpeechModel = dir
	if got, err := a.Service.SaveSettings(good); err != nil || got.DefaultSpeechModel != dir {
		t.Fatalf("save %v: %+v", err, got)
	}
}
