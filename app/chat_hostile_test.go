package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"hark/models/chattemplate"
)

// The hostile chat templates of issue 17 through the server: each used to
// take the whole hark serve down, or leave it "generating" for ever with
// every other chat refused.
func TestChatHostileTemplates(t *testing.T) {
	files := storiesModel(t)
	withTemplate := func(src string) map[string][]byte {
		m := map[string][]byte{}
		for k, v := range files {
			m[k] = v
		}
		cfg, _ := json.Marshal(map[string]string{"chat_template": src, "bos_token": "<s>", "eos_token": "</s>"})
		m["tokenizer_config.json"] = cfg
		return m
	}
	hostile := map[string]string{
		"test/recursion": `{% macro r(n) %}{{ r(n+1) }}{% endmacro %}{{ r(0) }}`,
		"test/loop":      `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`,
		"test/output":    `{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}`,
	}
	a, _ := chatApp(t, func(cache string) {
		for repo, src := range hostile {
			chatSnapshot(t, cache, repo, withTemplate(src))
		}
	})
	s := a.Service
	events := subscribeChat(t, a)
	send := func(repo string) int64 {
		t.Helper()
		cm := waitChatModel(t, s, fingerprint(repo))
		c, err := s.CreateConversation(NewConversation{Model: cm.ID, Sampling: ChatSampling{MaxTokens: ptr(2)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SendMessage(c.ID, SendRequest{Text: "Hello"}); err != nil {
			t.Fatal(err)
		}
		return c.ID
	}

	// Recursion and output go over their limits: an error naming the limit.
	for repo, limit := range map[string]string{"test/recursion": "recursion depth", "test/output": "output size"} {
		id := send(repo)
		end := last(events.reply(id, nil))
		if end.Type != "error" || !strings.Contains(end.Error, limit) || !strings.Contains(end.Error, "tokenizer_config.json") {
			t.Errorf("%s: end %+v, want an error naming the %s limit and the file", repo, end, limit)
		}
	}

	// The endless loop is stopped by the user: the status leaves
	// "generating" and the next chat is accepted. The limits are lifted so
	// that only the stop can end it.
	saved := chattemplate.DefaultLimits
	chattemplate.DefaultLimits = chattemplate.Limits{MaxDepth: saved.MaxDepth, MaxIterations: 1 << 62, MaxOutput: saved.MaxOutput, MaxTime: time.Hour}
	defer func() { chattemplate.DefaultLimits = saved }()
	id := send("test/loop")
	time.Sleep(200 * time.Millisecond)
	if st, _ := s.ChatStatus(); !st.Generating {
		t.Fatalf("status %+v: the loop template should still be rendering", st)
	}
	if err := s.StopGeneration(id); err != nil {
		t.Fatal(err)
	}
	end := last(events.reply(id, nil))
	if end.Type != "done" || end.Stats == nil || !end.Stats.Stopped {
		t.Fatalf("end %+v, want a stopped reply", end)
	}
	if st, _ := s.ChatStatus(); st.Generating {
		t.Fatalf("status %+v after stop", st)
	}
	id = send("test/recursion")
	if end := last(events.reply(id, nil)); end.Type != "error" {
		t.Fatalf("second chat after stop: %+v", end)
	}
}
