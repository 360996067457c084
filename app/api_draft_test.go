package app

import (
	"encoding/json"
	"strings"
	"testing"
)

// /v1/chat/completions takes Hark's draft_model extension: a Library
// model with the same vocabulary drafts and the greedy reply is the plain
// one; prompt lookup too; a model with another tokenizer is refused by
// name, as are an unknown one and draft_tokens alone.
func TestAPIDraftModel(t *testing.T) {
	const target, same, other = "test/qwen3-random", "test/qwen2-a", "karpathy/stories260K"
	files := map[string]map[string][]byte{target: qwenChatModel(t), same: familyModel(t, "qwen2-a"), other: storiesModel(t)}
	a, srv := chatApp(t, func(cache string) {
		for repo, f := range files {
			chatSnapshot(t, cache, repo, f)
		}
	})
	for repo := range files {
		waitChatModel(t, a.Service, fingerprint(repo))
	}
	post := func(extra string) (int, string) {
		t.Helper()
		body := `{"model":"` + target + `","messages":[{"role":"user","content":"Tell me a story."}],"temperature":0,"max_tokens":30` + extra + `}`
		return do(t, "POST", srv.URL+"/v1/chat/completions", body, map[string]string{"Content-Type": "application/json"})
	}
	content := func(body string) string {
		t.Helper()
		var r struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Choices) != 1 {
			t.Fatalf("%v: %s", err, body)
		}
		return r.Choices[0].Message.Content
	}
	code, plain := post("")
	if code != 200 {
		t.Fatalf("plain: %d %s", code, plain)
	}
	for _, extra := range []string{`,"draft_model":"` + same + `"`, `,"draft_model":"` + same + `","draft_tokens":3`, `,"draft_model":"prompt-lookup"`} {
		code, body := post(extra)
		if code != 200 || content(body) != content(plain) {
			t.Fatalf("%s: %d %q, want %q", extra, code, body, content(plain))
		}
	}
	loaded := false
	for _, m := range a.Runner.Loaded() {
		loaded = loaded || (m.Kind == "draft" && strings.Contains(m.Dir, "qwen2-a"))
	}
	if !loaded {
		t.Fatalf("the runner does not hold the draft model: %+v", a.Runner.Loaded())
	}
	for _, c := range []struct {
		extra, want string
		code        int
	}{
		{`,"draft_model":"` + other + `"`, "another tokenizer", 400},
		{`,"draft_model":"nobody/nothing"`, "does not exist", 404},
		{`,"draft_tokens":3`, "draft_tokens needs draft_model", 400},
	} {
		code, body := post(c.extra)
		msg, _ := apiError(t, body)
		if code != c.code || !strings.Contains(msg, c.want) || !strings.Contains(body, `"param":"draft_`) {
			t.Errorf("%s: %d %s", c.extra, code, body)
		}
	}
}
