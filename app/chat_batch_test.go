package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"hark/app/runner"
)

// The desktop chat decodes on the API's shared path (runner.Share and the
// engine's batch): its reply leaves the prompt and the generated tokens in
// the model's prefix cache, so an API request that continues the same
// text prefills only what is new.
func TestChatSharesTheAPIPath(t *testing.T) {
	a, srv, cm := storiesChat(t)
	s := a.Service
	events := subscribeChat(t, a)
	c, err := s.CreateConversation(NewConversation{Model: cm.ID, Sampling: ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(40)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendMessage(c.ID, SendRequest{Text: "Once upon a time"}); err != nil {
		t.Fatal(err)
	}
	end := last(events.reply(c.ID, nil))
	if end.Type != "done" || end.Stats.Tokens != 40 || end.Stats.KVBytes <= 0 {
		t.Fatalf("reply %+v stats %+v", end, end.Stats)
	}
	lease, err := a.Runner.Share(context.Background(), runner.Chat, cm.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := lease.Engine.BatchSteps()
	lease.Release()
	if steps < 39 {
		t.Fatalf("the reply ran %d batched decode steps, want one per token after the first", steps)
	}
	body, _ := json.Marshal(map[string]any{"model": storiesRepo, "prompt": "Once upon a time" + end.Message.Content + " The dog", "max_tokens": 4, "temperature": 0})
	code, resp := do(t, "POST", srv.URL+"/v1/completions", string(body), map[string]string{"Content-Type": "application/json"})
	var out struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			Details      struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if code != 200 || json.Unmarshal([]byte(resp), &out) != nil {
		t.Fatalf("completion: %d %s", code, resp)
	}
	// The chat's prompt and at least half its reply come from the cache.
	if u := out.Usage; u.Details.Cached < end.Stats.PromptTokens+20 || u.Details.Cached >= u.PromptTokens {
		t.Fatalf("API request after a chat reply of %d prompt + 40 tokens: %+v", end.Stats.PromptTokens, u)
	}

	// The reply's row is reserved against the runner's budget before it
	// streams: with the limit below the model's admission, a reply (it
	// reserves at least the conversation the estimate assumes) is refused,
	// naming memory, and nothing streams.
	var held int64
	for _, m := range a.Runner.Loaded() {
		if m.Kind == runner.Chat {
			held = m.Bytes
		}
	}
	a.Runner.SetLimit(held - 1)
	defer a.Runner.SetLimit(0)
	c2, err := s.CreateConversation(NewConversation{Model: cm.ID, Sampling: ChatSampling{Temperature: ptr(0.0)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendMessage(c2.ID, SendRequest{Text: "Once upon a time"}); err != nil {
		t.Fatal(err)
	}
	evs := events.reply(c2.ID, nil)
	if end := last(evs); held <= 0 || end.Type != "error" || !strings.Contains(end.Error, "not enough memory") {
		t.Fatalf("a reply with no room for its row (limit %d): %+v", held, evs)
	}
	for _, ev := range evs {
		if ev.Type == "delta" {
			t.Fatalf("a refused reply streamed: %+v", evs)
		}
	}
}
