package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/library"
)

// A snapshot whose weights never arrived (a pull killed half-way: config
// and tokenizer linked, the weights a partial blob) is Incomplete: not
// offered for chat, and a conversation set to it says what is missing
// instead of failing with a raw "no such file or directory".
func TestChatRefusesIncompleteModel(t *testing.T) {
	files := storiesModel(t)
	weights := files["model.safetensors"]
	delete(files, "model.safetensors")
	const repo = "hark-test/half"
	a, _ := chatApp(t, func(cache string) {
		repoDir := chatSnapshot(t, cache, repo, files)
		if err := os.WriteFile(filepath.Join(repoDir, "blobs", "0badc0de.incomplete"), weights[:len(weights)/2], 0o644); err != nil {
			t.Fatal(err)
		}
	})
	s := a.Service
	id := fingerprint(repo)
	if _, err := s.RescanModels(); err != nil {
		t.Fatal(err)
	}
	m, err := s.GetModel(id)
	if err != nil || !m.Incomplete || m.Downloading || m.Supported || !library.Resumable(m.Model) {
		t.Fatalf("half-downloaded model %+v %v", m, err)
	}
	if cms, _ := s.ListChatModels(); len(cms) != 0 {
		t.Fatalf("offered for chat: %+v", cms)
	}
	c, err := s.CreateConversation(NewConversation{Model: id})
	if err != nil {
		t.Fatal(err)
	}
	ev := subscribeChat(t, a)
	if _, err := s.SendMessage(c.ID, SendRequest{Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	end := last(ev.reply(c.ID, nil))
	if end.Type != "error" || !strings.Contains(end.Error, "no weights") || strings.Contains(end.Error, "no such file") {
		t.Fatalf("reply to an incomplete model: %+v", end)
	}
}
