package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hark/library/librarytest"
	"hark/mlx/mlxtest"
	"hark/models/chattemplate"
)

// The hostile chat templates of issue 17 (see chattemplate's sandbox).
var hostileTemplates = map[string]string{
	"recursion depth": `{% macro r(n) %}{{ r(n+1) }}{% endmacro %}{{ r(0) }}`,
	"loop iterations": `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`,
	"output size":     `{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}`,
}

func writeTemplateConfig(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]string{"chat_template": src})
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// liftLimits lets only cancellation end a render, for the tests of it.
func liftLimits(t *testing.T) {
	saved := chattemplate.DefaultLimits
	chattemplate.DefaultLimits = chattemplate.Limits{MaxDepth: saved.MaxDepth, MaxIterations: 1 << 62, MaxOutput: saved.MaxOutput, MaxTime: time.Hour}
	t.Cleanup(func() { chattemplate.DefaultLimits = saved })
}

func TestTemplateHostile(t *testing.T) {
	for limit, src := range hostileTemplates {
		dir := writeTemplateConfig(t, src)
		code, out, errs := runCLI(t, `{"messages":[{"role":"user","content":"hi"}]}`, "template", "--tokenizer", dir)
		if code != ExitError || !strings.Contains(errs, limit) || !strings.Contains(errs, "tokenizer_config.json") || out != "" {
			t.Errorf("%s: exit %d, %d bytes out, stderr %q", limit, code, len(out), errs)
		}
	}
}

// Ctrl-C and SIGTERM cancel the command's context (main.go); the render
// must notice.
func TestTemplateCancelled(t *testing.T) {
	liftLimits(t)
	dir := writeTemplateConfig(t, hostileTemplates["loop iterations"])
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	go func() {
		var errb bytes.Buffer
		Main(ctx, &Env{Stdin: strings.NewReader(`{"messages":[]}`), Stdout: io.Discard, Stderr: &errb}, []string{"template", "--tokenizer", dir})
		done <- errb.String()
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case errs := <-done:
		if !strings.Contains(errs, "context canceled") {
			t.Errorf("stderr %q", errs)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("hark template ignored cancellation")
	}
}

// hark serve, rendering an endless template for a chat, stops on SIGTERM
// (its context) and releases the data folder's lock.
func TestServeStopsDuringHostileChat(t *testing.T) {
	liftLimits(t)
	src := mlxtest.Assets(t, "models", "stories260K", "hf")
	files := map[string][]byte{}
	for _, n := range []string{"config.json", "model.safetensors", "tokenizer.json"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	files["tokenizer_config.json"], _ = json.Marshal(map[string]string{"chat_template": hostileTemplates["loop iterations"]})
	cache, home := t.TempDir(), t.TempDir()
	const repo, commit = "test/loop", "0123456789abcdef0123456789abcdef01234567"
	librarytest.WriteSnapshot(t, cache, repo, commit, files)
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HARK_HOME", home)

	serve := func(ctx context.Context) (string, chan int) {
		out := &syncBuffer{ch: make(chan string, 16)}
		done := make(chan int, 1)
		go func() {
			done <- Main(ctx, &Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: io.Discard}, []string{"serve", "--addr", "127.0.0.1:0"})
		}()
		select {
		case line := <-out.ch:
			return strings.TrimSpace(strings.TrimPrefix(line, "Hark is serving on ")), done
		case code := <-done:
			t.Fatalf("serve exited %d", code)
		case <-time.After(30 * time.Second):
			t.Fatal("serve printed nothing")
		}
		return "", nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, done := serve(ctx)
	post := func(path, body string) string {
		res, err := http.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			t.Fatalf("%s: %d %s", path, res.StatusCode, b)
		}
		return string(b)
	}
	model := "hf:" + repo + "@" + commit
	for deadline := time.Now().Add(30 * time.Second); ; {
		res, err := http.Get(url + "/api/chat/models")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(b), model) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("model never listed: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var c struct{ ID int64 }
	json.Unmarshal([]byte(post("/api/chats", `{"model":"`+model+`"}`)), &c)
	post("/api/chats/"+jsonInt(c.ID)+"/messages", `{"text":"hello"}`)
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit on SIGTERM while a template rendered")
	}
	// The lock is free: a second serve on the same folder starts.
	ctx2, cancel2 := context.WithCancel(context.Background())
	_, done2 := serve(ctx2)
	cancel2()
	<-done2
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }
