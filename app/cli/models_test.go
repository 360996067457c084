package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hark/app"
	"hark/app/runner"
	"hark/engine"
	"hark/library"
	"hark/library/librarytest"
	"hark/library/store"
	"hark/mlx/mlxtest"
	"hark/models/nn"
	"hark/models/profile"
)

const modelsCommit = "89abcdef0123456789abcdef0123456789abcdef"

func runModelsCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}, append([]string{"models"}, args...))
	return code, out.String(), errb.String()
}

// modelsEnv points the data dir and the HF cache at temp dirs and fills
// the cache with the real stories260K snapshot.
func modelsEnv(t *testing.T) string {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("HARK_HOME", t.TempDir())
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", "")
	src := mlxtest.Assets(t, "models", "stories260K", "hf")
	librarytest.WriteSnapshot(t, cache, "karpathy/stories260K", modelsCommit,
		librarytest.ReadFiles(t, src, "config.json", "model.safetensors", "tokenizer.json"))
	return cache
}

func TestModelsListAndShow(t *testing.T) {
	cache := modelsEnv(t)
	code, out, errs := runModelsCLI(t, "")
	fp := "hf:karpathy/stories260K@" + modelsCommit
	if code != ExitOK || !strings.Contains(out, "ID") || !strings.Contains(out, fp) || !strings.Contains(out, "chat") || !strings.Contains(out, "K ") {
		t.Fatalf("list: %d %q %q", code, out, errs)
	}
	// The status column is the profile resolver's verdict on the real
	// config, whichever graph packages this binary links.
	cfgBytes, _ := os.ReadFile(filepath.Join(mlxtest.Assets(t, "models", "stories260K", "hf"), "config.json"))
	cfg, err := profile.Parse(cfgBytes)
	if err != nil {
		t.Fatal(err)
	}
	want := "ok"
	if r := profile.Resolve(cfg); !r.Supported {
		want = "unsupported: " + r.Reason
	}
	if !strings.Contains(out, "  "+want+"\n") {
		t.Errorf("status column: want %q in %q", want, out)
	}
	code, out, _ = runModelsCLI(t, "", "--json")
	var ms []library.Model
	if code != ExitOK || json.Unmarshal([]byte(out), &ms) != nil || len(ms) != 1 || ms[0].Params == 0 {
		t.Fatalf("json: %d %s", code, out)
	}
	for _, id := range []string{fp, "karpathy/stories260K", ms[0].Path} {
		code, out, errs = runModelsCLI(t, "", "show", id)
		if code != ExitOK || !strings.Contains(out, "commit:") || !strings.Contains(out, "model.safetensors") || !strings.Contains(out, "refs:           main") {
			t.Fatalf("show %s: %d %q %q", id, code, out, errs)
		}
	}
	if code, _, errs := runModelsCLI(t, "", "show", "nope/nope"); code != ExitError || !strings.Contains(errs, "no such model") {
		t.Fatalf("missing: %d %q", code, errs)
	}
	if code, _, _ := runModelsCLI(t, "", "show"); code != ExitUsage {
		t.Fatalf("show without id: %d", code)
	}

	// Verify passes, then fails after corrupting a blob.
	if code, out, errs := runModelsCLI(t, "", "verify"); code != ExitOK || !strings.Contains(out, "ok ") {
		t.Fatalf("verify: %d %q %q", code, out, errs)
	}
	blobs, _ := filepath.Glob(filepath.Join(cache, "*", "blobs", "*"))
	for _, b := range blobs {
		os.WriteFile(b, []byte("garbage"), 0o644)
		break
	}
	if code, out, _ := runModelsCLI(t, "", "verify", fp); code != ExitError || !strings.Contains(out, "FAILED") || !strings.Contains(out, "expected") {
		t.Fatalf("verify corrupt: %d %q", code, out)
	}

	// rm asks first; "n" keeps it, "y" deletes and reports space freed.
	if code, _, _ := runModelsCLI(t, "n\n", "rm", fp); code != ExitError {
		t.Fatalf("declined rm: %d", code)
	}
	if _, err := os.Stat(ms[0].Path); err != nil {
		t.Fatal("declined rm deleted")
	}
	code, out, errs = runModelsCLI(t, "y\n", "rm", "karpathy/stories260K")
	if code != ExitOK || !strings.Contains(out, "freed") || !strings.Contains(errs, "frees") {
		t.Fatalf("rm: %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(ms[0].Path); err == nil {
		t.Fatal("rm left the snapshot")
	}
}

func TestModelsPullWithProgress(t *testing.T) {
	modelsEnv(t)
	orig := plainEvery
	plainEvery = 200 * time.Millisecond
	t.Cleanup(func() { plainEvery = orig })
	payload := bytes.Repeat([]byte("weights!"), 1<<16)
	sum := sha256.Sum256(payload)
	etag := hex.EncodeToString(sum[:])
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/models/o/r/revision/main":
			fmt.Fprintf(w, `{"sha":%q,"siblings":[{"rfilename":"model.safetensors"}]}`, modelsCommit)
		case "/o/r/resolve/" + modelsCommit + "/model.safetensors":
			w.Header().Set("X-Repo-Commit", modelsCommit)
			w.Header().Set("X-Linked-Etag", `"`+etag+`"`)
			w.Header().Set("X-Linked-Size", fmt.Sprint(len(payload)))
			w.Header().Set("Content-Length", fmt.Sprint(len(payload)))
			if r.Method == "GET" {
				// Slow enough for the non-terminal progress line to show.
				half := len(payload) / 2
				w.Write(payload[:half])
				w.(http.Flusher).Flush()
				time.Sleep(plainEvery + 300*time.Millisecond)
				w.Write(payload[half:])
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer hub.Close()
	t.Setenv("HF_ENDPOINT", hub.URL)
	code, out, errs := runModelsCLI(t, "", "pull", "o/r")
	if code != ExitOK || !strings.Contains(out, "pulled hf:o/r@"+modelsCommit) {
		t.Fatalf("pull: %d %q %q", code, out, errs)
	}
	if !strings.Contains(errs, "pull o/r") || !strings.Contains(errs, "%") {
		t.Fatalf("no progress line on stderr: %q", errs)
	}
	if code, _, _ := runModelsCLI(t, "", "pull", "not a repo"); code != ExitUsage {
		t.Fatalf("bad ref: %d", code)
	}
}

func TestHumanFormats(t *testing.T) {
	cases := map[int64]string{0: "0 B", 999: "999 B", 1536: "1.5 KB", 5e9: "5.0 GB", 5 << 30: "5.4 GB"}
	for n, want := range cases {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
	counts := map[int64]string{0: "-", 999: "999", 260_000: "260K", 1_234_567_890: "1.2B", 7_000_000: "7M"}
	for n, want := range counts {
		if got := humanCount(n); got != want {
			t.Errorf("humanCount(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestModelsSearch(t *testing.T) {
	modelsEnv(t)
	var asked []string
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/models" {
			http.NotFound(w, r)
			return
		}
		asked = append(asked, r.URL.RawQuery)
		if r.URL.Query().Get("search") == "nothing" {
			fmt.Fprint(w, `[]`)
			return
		}
		fmt.Fprint(w, `[{"id":"mlx-community/Qwen3-0.6B-4bit","pipeline_tag":"text-generation","library_name":"mlx","downloads":1234,
			"config":{"model_type":"qwen3"},"safetensors":{"total":600000000}}]`)
	}))
	defer hub.Close()
	t.Setenv("HF_ENDPOINT", hub.URL)

	code, out, errs := runModelsCLI(t, "", "search", "qwen3", "--kind", "chat", "--mlx")
	if code != ExitOK || !strings.Contains(out, "mlx-community/Qwen3-0.6B-4bit") || !strings.Contains(out, "1234") || !strings.Contains(out, "MLX") {
		t.Fatalf("search: %d %q %q", code, out, errs)
	}
	q := asked[len(asked)-1]
	for _, want := range []string{"search=qwen3", "pipeline_tag=text-generation", "filter=mlx", "sort=downloads"} {
		if !strings.Contains(q, want) {
			t.Errorf("query %q lacks %s", q, want)
		}
	}
	code, out, _ = runModelsCLI(t, "", "search", "qwen3", "--json")
	var res []map[string]any
	if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil || len(res) != 1 || res[0]["repo"] != "mlx-community/Qwen3-0.6B-4bit" || res[0]["params"] != 6e8 {
		t.Fatalf("search --json: %d %q", code, out)
	}
	if code, out, _ = runModelsCLI(t, "", "search", "nothing", "--json"); code != ExitOK || strings.TrimSpace(out) != "[]" {
		t.Fatalf("empty --json: %d %q", code, out)
	}
	if code, _, _ := runModelsCLI(t, "", "search", "x", "--kind", "vision"); code != ExitUsage {
		t.Fatalf("bad kind: %d", code)
	}
	hub.Close()
	if code, _, errs := runModelsCLI(t, "", "search", "x"); code != ExitError || !strings.Contains(errs, "reach the hub") {
		t.Fatalf("hub down: %d %q", code, errs)
	}
}

// hark models says whether each model fits in memory, from the engine's
// estimate, for the KV setting and context asked for.
func TestModelsFitVerdict(t *testing.T) {
	modelsEnv(t) // stories260K in the cache
	list := func(args ...string) library.Model {
		t.Helper()
		code, out, errs := runModelsCLI(t, "", append([]string{"--json"}, args...)...)
		var ms []library.Model
		if code != ExitOK || json.Unmarshal([]byte(out), &ms) != nil || len(ms) != 1 {
			t.Fatalf("models --json %v: %d %s %s", args, code, out, errs)
		}
		return ms[0]
	}
	m := list()
	want, err := engine.Estimate(m.Path, engine.EstimateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The figure the runner checks before loading it (with its prefix cache).
	if m.Fit != "fits" || m.MemoryNeeded != runner.Admission(runner.Chat, want) {
		t.Fatalf("fit %q, memory %d; want fits, %d", m.Fit, m.MemoryNeeded, runner.Admission(runner.Chat, want))
	}
	if q := list("--kv-bits", "8", "--kv-group", "32"); q.MemoryNeeded >= m.MemoryNeeded {
		t.Errorf("an 8-bit KV cache needs %d, float32 %d", q.MemoryNeeded, m.MemoryNeeded)
	}
	// The context asked for is the one estimated, the engine's own figure.
	short, err := engine.Estimate(m.Path, engine.EstimateOptions{Context: 16})
	if err != nil {
		t.Fatal(err)
	}
	if c := list("--context", "16"); c.MemoryNeeded != runner.Admission(runner.Chat, short) || c.MemoryNeeded >= m.MemoryNeeded {
		t.Errorf("--context 16 needs %d; want the engine's %d, under the default's %d", c.MemoryNeeded, runner.Admission(runner.Chat, short), m.MemoryNeeded)
	}
	if code, _, errs := runModelsCLI(t, "", "--kv-bits", "3"); code != ExitUsage || !strings.Contains(errs, "3") {
		t.Errorf("3-bit KV: %d %s", code, errs)
	}
	code, out, _ := runModelsCLI(t, "")
	if code != ExitOK || !strings.Contains(out, "MEMORY") || !strings.Contains(out, "fits") {
		t.Errorf("table: %s", out)
	}

	// With no flags, the verdict is the Library page's: for Settings' KV
	// cache and context. A flag still overrides each.
	db, err := store.Open(filepath.Join(app.DataDir(), "hark.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st.KVBits, st.ContextTokens = 8, 256
	if err := db.SaveSettings(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	db.Close()
	fromSettings, err := engine.Estimate(m.Path, engine.EstimateOptions{KV: nn.KVQuant{Bits: 8}, Context: 256})
	if err != nil {
		t.Fatal(err)
	}
	if s := list(); s.MemoryNeeded != runner.Admission(runner.Chat, fromSettings) {
		t.Errorf("with Settings' 8-bit KV and 256 tokens: %d; want %d", s.MemoryNeeded, runner.Admission(runner.Chat, fromSettings))
	}
	if f := list("--kv-bits", "0", "--context", "0"); f.MemoryNeeded != m.MemoryNeeded {
		t.Errorf("flags over Settings: %d; want the float32 default's %d", f.MemoryNeeded, m.MemoryNeeded)
	}
}
