package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

// familyModel reads a family golden's files.
func familyModel(t *testing.T, v string) map[string][]byte {
	t.Helper()
	dir := mlxtest.Assets(t, "families", v, "hf")
	out := map[string][]byte{}
	for _, n := range []string{"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = b
	}
	return out
}

// The Drafting list offers the Library's models with the conversation
// model's vocabulary (qwen2-a's tokenizer.json is Qwen3's; llama-a's file
// differs but its vocabulary is the same) and not the others; a draft
// model drafts through the runner and the reply at temperature 0 is the
// plain one; one with another tokenizer is refused by name when it runs,
// and a draft that is not in the Library when it is saved.
func TestChatDraftModel(t *testing.T) {
	const target, same, sameVocab, other = "test/qwen3-random", "test/qwen2-a", "test/llama-a", "karpathy/stories260K"
	files := map[string]map[string][]byte{target: qwenChatModel(t), same: familyModel(t, "qwen2-a"), sameVocab: familyModel(t, "llama-a"), other: storiesModel(t)}
	a, _ := chatApp(t, func(cache string) {
		for repo, f := range files {
			chatSnapshot(t, cache, repo, f)
		}
	})
	s := a.Service
	for repo := range files {
		waitChatModel(t, s, fingerprint(repo))
	}
	drafts, err := s.ListDraftModels(fingerprint(target))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range drafts {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	if want := []string{fingerprint(sameVocab), fingerprint(same)}; !slices.Equal(ids, want) {
		t.Fatalf("draft models %v, want %v", ids, want)
	}

	events := subscribeChat(t, a)
	reply := func(sm ChatSampling) ChatEvent {
		t.Helper()
		c, err := s.CreateConversation(NewConversation{Model: fingerprint(target), Sampling: sm})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SendMessage(c.ID, SendRequest{Text: "Tell me a story."}); err != nil {
			t.Fatal(err)
		}
		return last(events.reply(c.ID, nil))
	}
	plain := reply(ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(40)})
	spec := reply(ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(40), Draft: ptr(fingerprint(same))})
	if plain.Type != "done" || spec.Type != "done" || spec.Message.Content != plain.Message.Content || spec.Stats.Drafted == 0 {
		t.Fatalf("plain %+v\nwith a draft model %+v %+v", plain.Message, spec.Message, spec.Stats)
	}
	loaded := map[string]bool{}
	for _, m := range a.Runner.Loaded() {
		loaded[string(m.Kind)+" "+filepath.Base(filepath.Dir(filepath.Dir(m.Dir)))] = true
	}
	if !loaded["draft models--test--qwen2-a"] {
		t.Fatalf("the runner does not hold the draft model: %v", loaded)
	}
	bad := reply(ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(4), Draft: ptr(fingerprint(other))})
	if bad.Type != "error" || !strings.Contains(bad.Error, "cannot draft for") || !strings.Contains(bad.Error, "another tokenizer") {
		t.Fatalf("a draft model with another tokenizer: %+v", bad)
	}
	if _, err := s.CreateConversation(NewConversation{Model: fingerprint(target), Sampling: ChatSampling{Draft: ptr("hf:nobody/nothing@0123")}}); err == nil || !strings.Contains(err.Error(), "nor a model in your Library") {
		t.Fatalf("a draft model not in the Library: %v", err)
	}
}
