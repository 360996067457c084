package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hark/app/chat"
	"hark/library/librarytest"
	"hark/library/store"
	"hark/mlx/mlxtest"
)

const chatCommit = "89abcdef0123456789abcdef0123456789abcdef"

// chatApp starts an App whose HF cache is a temp folder, with an HTTP
// server in front.
func chatApp(t *testing.T, prepare func(cache string)) (*App, *httptest.Server) {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	if prepare != nil {
		prepare(cache)
	}
	a, err := New(Options{DataDir: t.TempDir(), NoLock: true, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); a.Close() })
	return a, srv
}

// chatSnapshot lays files out as an HF cache snapshot of repo.
func chatSnapshot(t *testing.T, cache, repo string, files map[string][]byte) string {
	t.Helper()
	return librarytest.WriteSnapshot(t, cache, repo, chatCommit, files)
}

// storiesModel reads the stories260K files (skipping without assets).
func storiesModel(t *testing.T) map[string][]byte {
	t.Helper()
	dir := mlxtest.Assets(t, "models", "stories260K", "hf")
	out := map[string][]byte{}
	for _, n := range []string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = b
	}
	return out
}

func fingerprint(repo string) string { return "hf:" + repo + "@" + chatCommit }

// storiesRepo is the name stories260K is listed under by storiesChat.
const storiesRepo = "karpathy/stories260K"

// storiesChat starts a chatApp whose HF cache holds stories260K as
// storiesRepo and returns it once the library lists the chat model.
func storiesChat(t *testing.T) (*App, *httptest.Server, ChatModel) {
	t.Helper()
	files := storiesModel(t)
	a, srv := chatApp(t, func(cache string) { chatSnapshot(t, cache, storiesRepo, files) })
	return a, srv, waitChatModel(t, a.Service, fingerprint(storiesRepo))
}

// waitChatModel waits for the library's first scan to list id.
func waitChatModel(t *testing.T, s *Service, id string) ChatModel {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ms, err := s.ListChatModels()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.ID == id {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("model %s never listed; have %+v", id, ms)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chatEvents collects "chat" events of one conversation.
type chatEvents struct {
	t  *testing.T
	ch <-chan Event
}

func subscribeChat(t *testing.T, a *App) *chatEvents {
	ch, stop := a.Events.Subscribe()
	t.Cleanup(stop)
	return &chatEvents{t: t, ch: ch}
}

// reply returns the events of conversation id up to its done or error
// event; onDelta runs on each delta (to stop mid-way).
func (c *chatEvents) reply(id int64, onDelta func()) []ChatEvent {
	c.t.Helper()
	var out []ChatEvent
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev := <-c.ch:
			ce, ok := ev.Data.(ChatEvent)
			if ev.Topic != "chat" || !ok || ce.ConversationID != id || ce.Type == "conversation" {
				continue
			}
			out = append(out, ce)
			if ce.Type == "delta" && onDelta != nil {
				onDelta()
			}
			if ce.Type == "done" || ce.Type == "error" {
				return out
			}
		case <-timeout:
			c.t.Fatalf("no end of reply; events so far %+v", out)
		}
	}
}

func last(evs []ChatEvent) ChatEvent { return evs[len(evs)-1] }

func deltas(evs []ChatEvent) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.Delta)
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

func TestChatConversationsOverHTTP(t *testing.T) {
	_, srv := chatApp(t, nil)
	var c store.Conversation
	code, body := postJSON(t, srv.URL+"/api/chats", `{"systemPrompt":"Be brief."}`, &c)
	if code != 200 || c.ID == 0 || c.Title != chat.DefaultTitle {
		t.Fatalf("create: %d %s", code, body)
	}
	base := srv.URL + "/api/chats/" + jsonNumber(c.ID)
	code, body = do(t, "PATCH", base, `{"title":"Ducks","sampling":{"temperature":0.2,"maxTokens":64,"seed":7}}`, nil)
	if code != 200 || !strings.Contains(body, `"title":"Ducks"`) || !strings.Contains(body, `"maxTokens":64`) {
		t.Fatalf("rename: %d %s", code, body)
	}
	for _, bad := range []string{`{"sampling":{"temperature":-1}}`, `{"sampling":{"topP":1.5}}`, `{"title":"  "}`} {
		if code, body := do(t, "PATCH", base, bad, nil); code != 400 {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
	// No model anywhere: sending explains what to do.
	code, body = postJSON(t, base+"/messages", `{"text":"hello"}`, nil)
	if code != 400 || !strings.Contains(body, "no model chosen") {
		t.Fatalf("send without model: %d %s", code, body)
	}
	if code, body := postJSON(t, base+"/messages", `{"text":"   "}`, nil); code != 400 || !strings.Contains(body, "empty") {
		t.Fatalf("empty message: %d %s", code, body)
	}
	// Stop with nothing running is fine (the reply may just have ended);
	// regenerate needs something to regenerate.
	if code, body := postJSON(t, base+"/stop", "", nil); code != 204 {
		t.Fatalf("idle stop: %d %s", code, body)
	}
	if code, body := postJSON(t, base+"/regenerate", "", nil); code != 400 {
		t.Fatalf("regenerate without a model or messages: %d %s", code, body)
	}
	var status ChatStatusInfo
	if code := getJSON(t, srv.URL+"/api/chat/status", &status); code != 200 || status.Generating {
		t.Fatalf("status %d %+v", code, status)
	}
	var models []ChatModel
	if code := getJSON(t, srv.URL+"/api/chat/models", &models); code != 200 || models == nil || len(models) != 0 {
		t.Fatalf("models %d %+v", code, models)
	}
	var list []store.Conversation
	if getJSON(t, srv.URL+"/api/chats", &list); len(list) != 1 || list[0].Title != "Ducks" {
		t.Fatalf("list %+v", list)
	}
	var md string
	if code := getJSON(t, base+"/export", &md); code != 200 || !strings.HasPrefix(md, "# Ducks\n") || !strings.Contains(md, "> Be brief.") {
		t.Fatalf("export %d %q", code, md)
	}
	if code, _ := do(t, "DELETE", base, "", nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	for _, u := range []string{base, base + "/messages", srv.URL + "/api/chats/x/messages"} {
		if code := getJSON(t, u, nil); code != 404 && code != 400 {
			t.Errorf("%s after delete: %d", u, code)
		}
	}
	if code := getJSON(t, base, nil); code != 404 {
		t.Errorf("deleted conversation: %d", code)
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// A real conversation with stories260K: tokens stream as events and add
// up to the stored reply, stats are stored, the follow-up reuses the
// prefix cache, regenerate replaces the reply, stop keeps a partial one.
func TestChatWithStories(t *testing.T) {
	mlxtest.NoLeaks(t)
	a, _, cm := storiesChat(t)
	s := a.Service
	if !cm.Completion || cm.Name != storiesRepo {
		t.Fatalf("chat model %+v: want a completion model named %s", cm, storiesRepo)
	}
	events := subscribeChat(t, a)
	c, err := s.CreateConversation(NewConversation{Model: cm.ID, Sampling: ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(40)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendMessage(c.ID, SendRequest{Text: "Once upon a time"}); err != nil {
		t.Fatal(err)
	}
	evs := events.reply(c.ID, nil)
	end := last(evs)
	if end.Type != "done" || end.Message == nil || end.Stats == nil {
		t.Fatalf("reply ended with %+v", end)
	}
	if evs[0].Type != "loading" || evs[1].Type != "start" || !evs[1].Completion {
		t.Fatalf("first events %+v", evs[:2])
	}
	if n := len(evs) - 3; n < 1 || deltas(evs) != end.Message.Content || end.Message.Content == "" {
		t.Fatalf("%d deltas %q, stored %q", n, deltas(evs), end.Message.Content)
	}
	st := end.Stats
	if st.Tokens != 40 || st.FinishReason != "length" || st.TTFTMs <= 0 || st.GenTPS <= 0 || st.Stopped || !st.Completion || st.LoadMs <= 0 {
		t.Fatalf("stats %+v", st)
	}
	msgs, err := s.GetMessages(c.ID)
	if err != nil || len(msgs) != 2 || msgs[1].Role != "assistant" || msgs[1].Content != end.Message.Content {
		t.Fatalf("stored %+v %v", msgs, err)
	}
	var stored ChatStats
	if err := json.Unmarshal(msgs[1].Stats, &stored); err != nil || stored.Tokens != 40 || stored.Model != cm.ID {
		t.Fatalf("stored stats %s %v", msgs[1].Stats, err)
	}
	if c2, _ := s.GetConversation(c.ID); c2.Title != "Once upon a time" {
		t.Errorf("title %q", c2.Title)
	}

	// The follow-up only prefills what is new.
	if _, err := s.SendMessage(c.ID, SendRequest{Text: " The dog"}); err != nil {
		t.Fatal(err)
	}
	end = last(events.reply(c.ID, nil))
	if end.Type != "done" || end.Stats.ReusedTokens < 20 || end.Stats.LoadMs != 0 {
		t.Fatalf("follow-up %+v stats %+v", end, end.Stats)
	}
	first := end.Message.Content

	// Regenerate replaces the last reply (greedy: the same text again).
	if _, err := s.Regenerate(c.ID); err != nil {
		t.Fatal(err)
	}
	end = last(events.reply(c.ID, nil))
	if end.Type != "done" || end.Message.Content != first {
		t.Fatalf("regenerated %+v, want %q", end, first)
	}
	if msgs, _ := s.GetMessages(c.ID); len(msgs) != 4 || msgs[3].ID != end.Message.ID {
		t.Fatalf("after regenerate %+v", msgs)
	}

	// Stop after the first delta: the partial reply is stored as stopped.
	if _, err := s.UpdateConversation(c.ID, ConversationUpdate{Sampling: &ChatSampling{Temperature: ptr(0.8), Seed: ptr(uint64(3))}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendMessage(c.ID, SendRequest{Text: " Then"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendMessage(c.ID, SendRequest{Text: "again"}); !isStatus(err, http.StatusConflict) {
		t.Fatalf("second send while busy: %v", err)
	}
	evs = events.reply(c.ID, func() { s.StopGeneration(c.ID) })
	end = last(evs)
	if end.Type != "done" || !end.Stats.Stopped || end.Stats.FinishReason != "cancelled" || end.Message.Content != deltas(evs) || end.Message.Content == "" {
		t.Fatalf("stopped reply %+v stats %+v", end, end.Stats)
	}
	if end.Stats.Tokens >= 300 {
		t.Fatalf("stop did not stop: %d tokens", end.Stats.Tokens)
	}
	md, err := s.ExportConversation(c.ID)
	if err != nil || !strings.Contains(md, "## You\n\nOnce upon a time\n") || !strings.Contains(md, first) || !strings.HasSuffix(md, "*(stopped)*\n") {
		t.Fatalf("export %v:\n%s", err, md)
	}
	if st, _ := s.ChatStatus(); st.Generating || st.LoadedModel != cm.ID {
		t.Fatalf("status %+v", st)
	}
}

func isStatus(err error, code int) bool { return err != nil && statusOf(err) == code }

// A thread longer than the 512-token context loses its oldest turns with
// a notice; a single message too long for it is refused clearly.
func TestChatContextOverflow(t *testing.T) {
	a, _, _ := storiesChat(t)
	s, ctx := a.Service, context.Background()
	events := subscribeChat(t, a)
	c, err := s.CreateConversation(NewConversation{Model: fingerprint(storiesRepo), Sampling: ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(16)}})
	if err != nil {
		t.Fatal(err)
	}
	story := strings.Repeat("The cat sat on the mat and the dog ran to the park. ", 6)
	for range 6 {
		a.DB.AddMessage(ctx, store.Message{ConversationID: c.ID, Role: "user", Content: story})
		a.DB.AddMessage(ctx, store.Message{ConversationID: c.ID, Role: "assistant", Content: story})
	}
	if _, err := s.SendMessage(c.ID, SendRequest{Text: "Once upon a time"}); err != nil {
		t.Fatal(err)
	}
	evs := events.reply(c.ID, nil)
	var start ChatEvent
	for _, e := range evs {
		if e.Type == "start" {
			start = e
		}
	}
	end := last(evs)
	if end.Type != "done" || end.Stats.Trimmed < 2 || !strings.Contains(start.Notice, "512-token context") {
		t.Fatalf("start %+v end %+v", start, end)
	}
	if end.Stats.PromptTokens+16 > 512 {
		t.Fatalf("prompt of %d tokens does not leave room for the reply", end.Stats.PromptTokens)
	}

	c2, _ := s.CreateConversation(NewConversation{Model: fingerprint(storiesRepo)})
	if _, err := s.SendMessage(c2.ID, SendRequest{Text: strings.Repeat(story, 8)}); err != nil {
		t.Fatal(err)
	}
	end = last(events.reply(c2.ID, nil))
	if end.Type != "error" || !strings.Contains(end.Error, "too long for this model") || !strings.Contains(end.Error, "512") {
		t.Fatalf("overflow %+v", end)
	}
}

// Broken or unsupported models, and models removed mid-chat, give a
// clear error event each, and the app keeps chatting afterwards.
func TestChatBadModels(t *testing.T) {
	files := storiesModel(t)
	noTok := map[string][]byte{}
	badTpl, badTok := map[string][]byte{}, map[string][]byte{}
	for k, v := range files {
		badTok[k] = v
		if k != "tokenizer.json" {
			noTok[k] = v
		}
		badTpl[k] = v
	}
	badTok["tokenizer.json"] = []byte(`{"model": {"type": "BPE", "vocab": [`)
	badTpl["tokenizer_config.json"] = []byte(`{"chat_template": "{% for m in messages %}{{ m.content | nosuchfilter }}{% endfor %}", "bos_token": "<s>", "eos_token": "</s>"}`)
	mamba := map[string][]byte{"config.json": []byte(`{"architectures":["MambaForCausalLM"],"model_type":"mamba"}`), "model.safetensors": files["model.safetensors"], "tokenizer.json": files["tokenizer.json"]}
	var goneDir string
	a, _ := chatApp(t, func(cache string) {
		chatSnapshot(t, cache, "karpathy/stories260K", files)
		chatSnapshot(t, cache, "test/no-tokenizer", noTok)
		chatSnapshot(t, cache, "test/bad-template", badTpl)
		chatSnapshot(t, cache, "test/bad-tokenizer", badTok)
		chatSnapshot(t, cache, "test/mamba", mamba)
		goneDir = chatSnapshot(t, cache, "test/soon-gone", files)
	})
	s := a.Service
	good := fingerprint("karpathy/stories260K")
	waitChatModel(t, s, good)
	waitChatModel(t, s, fingerprint("test/soon-gone"))
	events := subscribeChat(t, a)
	ask := func(model string) ChatEvent {
		t.Helper()
		c, err := s.CreateConversation(NewConversation{Model: model, Sampling: ChatSampling{MaxTokens: ptr(8)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SendMessage(c.ID, SendRequest{Text: "Hello"}); err != nil {
			t.Fatal(err)
		}
		return last(events.reply(c.ID, nil))
	}
	okReply := func() {
		t.Helper()
		if end := ask(good); end.Type != "done" || end.Message.Content == "" {
			t.Fatalf("a good model after a bad one: %+v", end)
		}
	}
	cases := []struct{ model, want string }{
		{fingerprint("test/no-tokenizer"), "tokenizer"},
		{fingerprint("test/bad-tokenizer"), "tokenizer"},
		{fingerprint("test/bad-template"), "chat template"},
		{fingerprint("test/mamba"), "supported: "},
		{"test/nowhere", "not in your Library"},
	}
	for _, tc := range cases {
		end := ask(tc.model)
		t.Logf("%s: %s", tc.model, end.Error)
		if end.Type != "error" || !strings.Contains(end.Error, tc.want) || end.Message != nil {
			t.Errorf("%s: %+v, want an error about %q", tc.model, end, tc.want)
		}
		okReply()
	}
	if strings.Contains(ask(fingerprint("test/mamba")).Error, "llama") == false {
		t.Errorf("the unsupported-architecture error does not name the supported ones")
	}

	// Files removed while the model is loaded: the next turn says so.
	gone := fingerprint("test/soon-gone")
	if end := ask(gone); end.Type != "done" {
		t.Fatalf("before removal: %+v", end)
	}
	if err := os.RemoveAll(goneDir); err != nil {
		t.Fatal(err)
	}
	if end := ask(gone); end.Type != "error" || !strings.Contains(end.Error, "removed") || !strings.Contains(end.Error, gone) {
		t.Fatalf("after removal: %+v", end)
	}
	if st, _ := s.ChatStatus(); st.LoadedModel != "" {
		t.Fatalf("engine of the removed model still loaded: %+v", st)
	}
	okReply()
	if st, _ := s.ChatStatus(); st.LoadedModel != good {
		t.Fatalf("loaded %q, want %q", st.LoadedModel, good)
	}
}

// The desktop Export saves the Markdown into Downloads, named after the
// title and never overwriting; over HTTP too.
func TestSaveConversationExport(t *testing.T) {
	a, srv := newTestApp(t)
	dl := t.TempDir()
	defer func(old func() string) { downloadsDir = old }(downloadsDir)
	downloadsDir = func() string { return dl }
	s := a.Service
	c, err := s.CreateConversation(NewConversation{Title: "Plans: 1/2 done?"})
	if err != nil {
		t.Fatal(err)
	}
	a.DB.AddMessage(context.Background(), store.Message{ConversationID: c.ID, Role: "user", Content: "What is left?"})
	p1, err := s.SaveConversationExport(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var p2 string
	if code, body := postJSON(t, srv.URL+fmt.Sprintf("/api/chats/%d/save", c.ID), "", &p2); code != 200 {
		t.Fatalf("POST save: %d %s", code, body)
	}
	if filepath.Base(p1) != "Plans_ 1_2 done_.md" || filepath.Base(p2) != "Plans_ 1_2 done_ (2).md" {
		t.Errorf("paths %q, %q", p1, p2)
	}
	b, _ := os.ReadFile(p1)
	want, _ := s.ExportConversation(c.ID)
	if string(b) != want || !strings.Contains(want, "What is left?") {
		t.Errorf("saved %q, want the export %q", b, want)
	}
	if _, err := s.SaveConversationExport(c.ID + 100); statusOf(err) != 404 {
		t.Errorf("unknown conversation: %v", err)
	}
	if got := titleFileName(" ... ", 7); got != "conversation-7" {
		t.Errorf("empty title gives %q", got)
	}
}
