package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"hark/engine"
	"hark/library/store"
)

func apiError(t *testing.T, body string) (msg, code string) {
	t.Helper()
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("not an OpenAI error: %s (%v)", body, err)
	}
	if e.Error.Code != nil {
		code = *e.Error.Code
	}
	return e.Error.Message, code
}

func saveSettings(t *testing.T, a *App, edit func(*store.Settings)) {
	t.Helper()
	s, err := a.Service.GetSettings()
	if err != nil {
		t.Fatal(err)
	}
	edit(&s)
	if _, err := a.Service.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
}

// /v1 paths never get the UI page: unknown ones are JSON 404s.
func TestAPIUnknownPathsAreJSON404(t *testing.T) {
	_, srv := newTestApp(t)
	for _, p := range []string{"/v1", "/v1/", "/v1/engines", "/v1/chat/completions/x", "/v1/models/nobody/nothing"} {
		code, body := do(t, "GET", srv.URL+p, "", nil)
		if code != 404 || strings.Contains(body, "<title>") {
			t.Errorf("%s: %d %s", p, code, body)
			continue
		}
		apiError(t, body)
	}
	code, body := do(t, "POST", srv.URL+"/v1/embeddings", `{"model":"x","input":"y"}`, map[string]string{"Content-Type": "application/json"})
	if msg, _ := apiError(t, body); code != 400 || !strings.Contains(msg, "embedding") {
		t.Errorf("embeddings: %d %s", code, body)
	}
	code, body = do(t, "POST", srv.URL+"/v1/chat/completions", `{"model":`, map[string]string{"Content-Type": "application/json"})
	if msg, _ := apiError(t, body); code != 400 || !strings.Contains(msg, "JSON") {
		t.Errorf("bad JSON: %d %s", code, body)
	}
}

// With a key set, /v1 needs it as a Bearer token, from any Host (a box
// serving a team); the UI keeps its loopback guard.
func TestAPIKeyAndHost(t *testing.T) {
	a, srv := newTestApp(t)
	if code, body := do(t, "GET", srv.URL+"/v1/models", "", map[string]string{"Host": "hark.lan:8734"}); code != 403 {
		t.Fatalf("no key, foreign host: %d %s", code, body)
	}
	saveSettings(t, a, func(s *store.Settings) { s.APIKey = "sk-team-secret" })
	for _, auth := range []string{"", "Bearer wrong-key-123", "sk-team-secret", "Basic sk-team-secret"} {
		code, body := do(t, "GET", srv.URL+"/v1/models", "", map[string]string{"Authorization": auth})
		if _, c := apiError(t, body); code != 401 || c != "invalid_api_key" {
			t.Errorf("auth %q: %d %s", auth, code, body)
		}
	}
	ok := map[string]string{"Authorization": "Bearer sk-team-secret", "Host": "hark.lan:8734"}
	if code, body := do(t, "GET", srv.URL+"/v1/models", "", ok); code != 200 {
		t.Errorf("right key: %d %s", code, body)
	}
	if code, _ := do(t, "GET", srv.URL+"/api/settings", "", ok); code != 403 {
		t.Errorf("the UI API answered a foreign host: %d", code)
	}
	// --api-key wins over the setting.
	b, err := New(Options{DataDir: a.DataDir, NoLock: true, Stderr: io.Discard, APIKey: "flag-key-456"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	srv2 := httptest.NewServer(b.Handler())
	defer srv2.Close()
	if code, _ := do(t, "GET", srv2.URL+"/v1/models", "", map[string]string{"Authorization": "Bearer flag-key-456"}); code != 200 {
		t.Errorf("flag key refused: %d", code)
	}
	if code, _ := do(t, "GET", srv2.URL+"/v1/models", "", map[string]string{"Authorization": "Bearer sk-team-secret"}); code != 401 {
		t.Errorf("setting key accepted over the flag: %d", code)
	}
}

// Browser pages: only our own origin and the CORS list, with preflight.
func TestAPICORS(t *testing.T) {
	a, srv := newTestApp(t)
	page := "http://localhost:3000"
	if code, body := do(t, "GET", srv.URL+"/v1/models", "", map[string]string{"Origin": page}); code != 403 {
		t.Fatalf("unlisted origin: %d %s", code, body)
	}
	saveSettings(t, a, func(s *store.Settings) { s.CORSOrigins = []string{page} })
	req, _ := http.NewRequest("OPTIONS", srv.URL+"/v1/chat/completions", nil)
	req.Header.Set("Origin", page)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != page || !strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
	}
	req, _ = http.NewRequest("GET", srv.URL+"/v1/models", nil)
	req.Header.Set("Origin", page)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != page {
		t.Fatalf("listed origin: %d %v", res.StatusCode, res.Header)
	}
	if code, _ := do(t, "GET", srv.URL+"/v1/models", "", map[string]string{"Origin": "http://evil.example"}); code != 403 {
		t.Fatalf("other origin: %d", code)
	}
}

func TestAPISwitchAndHeadless(t *testing.T) {
	a, srv := newTestApp(t)
	saveSettings(t, a, func(s *store.Settings) { s.APIDisabled = true })
	code, body := do(t, "GET", srv.URL+"/v1/models", "", nil)
	if _, c := apiError(t, body); code != 404 || c != "api_disabled" {
		t.Fatalf("switched off: %d %s", code, body)
	}
	saveSettings(t, a, func(s *store.Settings) { s.APIDisabled = false })
	if code, _ := do(t, "GET", srv.URL+"/v1/models", "", nil); code != 200 {
		t.Fatalf("switched on: %d", code)
	}

	ui := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>Hark</title>")}}
	h, err := New(Options{DataDir: t.TempDir(), UI: ui, NoLock: true, Stderr: io.Discard, Headless: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hs := httptest.NewServer(h.Handler())
	defer hs.Close()
	if code, body := do(t, "GET", hs.URL+"/", "", nil); code != 404 || strings.Contains(body, "<title>") || !strings.Contains(body, "headless") {
		t.Fatalf("headless UI: %d %s", code, body)
	}
	if code, _ := do(t, "GET", hs.URL+"/v1/models", "", nil); code != 200 {
		t.Fatalf("headless API: %d", code)
	}
}

// An upload over the limit is refused with 413 before it is all read, and
// leaves no file behind.
func TestAPIUploadLimit(t *testing.T) {
	a, srv := newTestApp(t)
	saveSettings(t, a, func(s *store.Settings) { s.MaxUploadMB = 1 })
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("model", "openai/whisper-tiny")
	fw, _ := mw.CreateFormFile("file", "big.wav")
	fw.Write(bytes.Repeat([]byte{0}, 3<<20))
	mw.Close()
	code, resp := do(t, "POST", srv.URL+"/v1/audio/transcriptions", body.String(), map[string]string{"Content-Type": mw.FormDataContentType()})
	if _, c := apiError(t, resp); code != 413 || c != "file_too_large" {
		t.Fatalf("over the limit: %d %s", code, resp)
	}
	entries, _ := readDirNames(a.DataDir + "/api-uploads")
	if len(entries) != 0 {
		t.Fatalf("uploads left behind: %v", entries)
	}
}

// The limit's MB is 10^6 bytes, the MB of every size Hark shows: with
// 1 MB set, a file of 1,020,000 bytes (under a MiB) is refused, and the
// refusal names the limit as the Library would write it.
func TestAPIUploadLimitIsDecimalMB(t *testing.T) {
	a, srv := newTestApp(t)
	saveSettings(t, a, func(s *store.Settings) { s.MaxUploadMB = 1 })
	send := func(n int) (int, string) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("model", "openai/whisper-tiny")
		fw, _ := mw.CreateFormFile("file", "clip.wav")
		fw.Write(bytes.Repeat([]byte{0}, n))
		mw.Close()
		code, resp := do(t, "POST", srv.URL+"/v1/audio/transcriptions", body.String(), map[string]string{"Content-Type": mw.FormDataContentType()})
		msg, c := apiError(t, resp)
		if code == 413 && c != "file_too_large" {
			t.Fatalf("413 with code %q: %s", c, resp)
		}
		return code, msg
	}
	code, msg := send(1_020_000)
	if code != 413 {
		t.Fatalf("1,020,000 bytes against a 1 MB limit: %d %s, want 413", code, msg)
	}
	if !strings.Contains(msg, engine.FormatBytes(1_000_000)+" upload limit") {
		t.Errorf("refusal %q does not name the limit as %s", msg, engine.FormatBytes(1_000_000))
	}
	if code, msg := send(1_000_000); code == 413 {
		t.Errorf("exactly 1 MB refused: %s", msg)
	}
}

func readDirNames(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out, err
}

// A request over the per-request deadline is cut off with a JSON 504, and
// its model's turn is given back.
func TestAPIDeadline(t *testing.T) {
	a, srv, _ := storiesChat(t)
	saved := apiDeadline
	apiDeadline = time.Millisecond
	defer func() { apiDeadline = saved }()
	// The handler reads the deadline when it is built.
	srv2 := httptest.NewServer(a.Handler())
	defer srv2.Close()
	body := `{"model":"` + storiesRepo + `","messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":480}`
	code, resp := do(t, "POST", srv2.URL+"/v1/chat/completions", body, map[string]string{"Content-Type": "application/json"})
	if _, c := apiError(t, resp); code != 504 || c != "timeout" {
		t.Fatalf("over the deadline: %d %s", code, resp)
	}
	apiDeadline = saved
	code, resp = do(t, "POST", srv.URL+"/v1/chat/completions", strings.Replace(body, "480", "3", 1), map[string]string{"Content-Type": "application/json"})
	if code != 200 || !strings.Contains(resp, `"completion_tokens":3`) {
		t.Fatalf("after the deadline: %d %s", code, resp)
	}
}

// The desktop app's API-only server: /v1 answers, nothing else does.
func TestServeAPIAlone(t *testing.T) {
	a, _ := newTestApp(t)
	addr := a.ServeAPI(context.Background(), "127.0.0.1:0")
	if addr == "" {
		t.Fatal("not served")
	}
	if code, body := do(t, "GET", "http://"+addr+"/v1/models", "", nil); code != 200 || !strings.Contains(body, `"object":"list"`) {
		t.Fatalf("models: %d %s", code, body)
	}
	if code, body := do(t, "GET", "http://"+addr+"/", "", nil); code != 404 || strings.Contains(body, "<title>") {
		t.Fatalf("UI path: %d %s", code, body)
	}
	if code, _ := do(t, "GET", "http://"+addr+"/api/settings", "", nil); code != 404 {
		t.Fatalf("UI API: %d", code)
	}
	// A second one on the same port is refused quietly.
	if again := a.ServeAPI(context.Background(), addr); again != "" {
		t.Fatalf("served twice on %s", again)
	}
}

// Uploads a crash left behind are removed at the next start.
func TestAPIUploadsClearedAtStart(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/api-uploads", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/api-uploads/hark-api-upload-1", []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{DataDir: dir, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Handler()
	if names, _ := readDirNames(dir + "/api-uploads"); len(names) != 0 {
		t.Fatalf("left over: %v", names)
	}
}
