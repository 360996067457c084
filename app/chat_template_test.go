package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/library"
	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
)

// A chat model (a tiny random Qwen3 with the real Qwen3 tokenizer and chat
// template) goes through the template rather than raw completion, and a
// follow-up reuses the cached prefix of the rendered conversation.
func TestChatWithTemplateModel(t *testing.T) {
	mlxtest.NoLeaks(t)
	tokDir := mlxtest.Assets(t, "tokenizers", "qwen3")
	const repo = "test/tiny-qwen3"
	a, _ := chatApp(t, func(cache string) {
		repoDir := filepath.Join(cache, library.RepoFolder(repo))
		snap := filepath.Join(repoDir, "snapshots", chatCommit)
		if err := os.MkdirAll(snap, 0o755); err != nil {
			t.Fatal(err)
		}
		shape := llmtest.Tiny
		shape.Vocab = 151936
		if err := llmtest.Llama(shape, "qwen3", true).Write(snap, 3, llmtest.Quant{Bits: 4, GroupSize: 64}); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"tokenizer.json", "tokenizer_config.json"} {
			b, err := os.ReadFile(filepath.Join(tokDir, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(snap, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		os.MkdirAll(filepath.Join(repoDir, "refs"), 0o755)
		if err := os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(chatCommit), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	s := a.Service
	cm := waitChatModel(t, s, fingerprint(repo))
	if cm.Completion || cm.Problem != "" || cm.Family != "qwen3" {
		t.Fatalf("chat model %+v: want a qwen3 chat model with a template", cm)
	}
	events := subscribeChat(t, a)
	c, err := s.CreateConversation(NewConversation{Model: cm.ID, SystemPrompt: "Be brief.", Sampling: ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(6)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendMessage(c.ID, SendRequest{Text: "Hello"}); err != nil {
		t.Fatal(err)
	}
	evs := events.reply(c.ID, nil)
	end := last(evs)
	if end.Type != "done" || end.Stats.Completion || end.Stats.PromptTokens < 10 || end.Stats.Tokens > 6 {
		t.Fatalf("reply %+v stats %+v", end, end.Stats)
	}
	for _, e := range evs {
		if e.Type == "start" && e.Completion {
			t.Fatalf("start event says completion: %+v", e)
		}
	}
	first := end.Stats.PromptTokens
	if _, err := s.SendMessage(c.ID, SendRequest{Text: "And then?"}); err != nil {
		t.Fatal(err)
	}
	end = last(events.reply(c.ID, nil))
	// The system prompt and first user turn are served from the cache.
	if end.Type != "done" || end.Stats.ReusedTokens < first/2 || end.Stats.PromptTokens <= first {
		t.Fatalf("follow-up stats %+v (first prompt %d tokens)", end.Stats, first)
	}
	md, err := s.ExportConversation(c.ID)
	if err != nil || !strings.Contains(md, "## You\n\nAnd then?\n") || !strings.Contains(md, "> Be brief.") {
		t.Fatalf("export %v:\n%s", err, md)
	}
}
