package app

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/engine"
	"hark/library/librarytest"
	"hark/library/store"
)

// writeHugeChatModel lays out repo as a chat model (the tiny Qwen3's
// tokenizer and template) whose one weight declares gb GB of float32: a
// sparse file, so it takes no disk, and no machine here can load it.
func writeHugeChatModel(t *testing.T, cache, repo string, gb int64) {
	t.Helper()
	files := tinyChatModel(t)
	var cfg map[string]any
	if err := json.Unmarshal(files["config.json"], &cfg); err != nil {
		t.Fatal(err)
	}
	const hidden = 8192
	vocab := gb * 1e9 / 4 / hidden
	cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"] = hidden, vocab, 2*hidden
	cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"] = 64, 8, 128
	files["config.json"], _ = json.Marshal(cfg)
	files["model.safetensors"] = []byte("placeholder")
	repoDir := librarytest.WriteSnapshot(t, cache, repo, testCommit, files)
	blob, err := filepath.EvalSymlinks(filepath.Join(repoDir, "snapshots", testCommit, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	n := vocab * hidden * 4
	header := []byte(fmt.Sprintf(`{"model.embed_tokens.weight":{"dtype":"F32","shape":[%d,%d],"data_offsets":[0,%d]}}`, vocab, hidden, n))
	f, err := os.Create(blob)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(len(header)))
	if _, err := f.Write(append(size[:], header...)); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(8+len(header)) + n); err != nil {
		t.Fatal(err)
	}
}

// Ask about a transcript opens the chat on a model that can answer here:
// a default too big for this machine's memory, or a base model without a
// chat template, is passed over for one that fits (issue 20: it opened on
// the last-used model, which could not load).
func TestAskSkipsModelsThatCannotAnswer(t *testing.T) {
	a, _ := chatApp(t, func(cache string) {
		writeHugeChatModel(t, cache, "test/huge-chat", 400)
		base := tinyChatModel(t)
		var tc map[string]any
		if err := json.Unmarshal(base["tokenizer_config.json"], &tc); err != nil {
			t.Fatal(err)
		}
		delete(tc, "chat_template")
		base["tokenizer_config.json"], _ = json.Marshal(tc)
		putSnapshot(t, cache, "test/base-model", base)
		putSnapshot(t, cache, "test/good-chat", tinyChatModel(t))
	})
	s := a.Service
	huge := waitChatModel(t, s, "hf:test/huge-chat@"+testCommit)
	base := waitChatModel(t, s, "hf:test/base-model@"+testCommit)
	good := waitChatModel(t, s, "hf:test/good-chat@"+testCommit)
	if huge.Fit != string(engine.FitTooBig) || !base.Completion || good.Fit == string(engine.FitTooBig) {
		t.Fatalf("fixtures: huge %q, base completion %v, good %q", huge.Fit, base.Completion, good.Fit)
	}
	tr, err := a.DB.SaveTranscript(context.Background(), store.Transcript{SourcePath: "/x/a.wav", SourceName: "a.wav", Model: "m", Language: "en",
		Segments: json.RawMessage(`[{"start":0,"end":2,"text":" We ship on Friday."}]`)})
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range []string{huge.ID, base.ID} {
		st, err := s.GetSettings()
		if err != nil {
			t.Fatal(err)
		}
		st.DefaultChatModel = def
		if _, err := s.SaveSettings(st); err != nil {
			t.Fatalf("default %s: %v", def, err)
		}
		conv, err := s.AskAboutTranscript(tr.ID)
		if err != nil {
			t.Fatalf("default %s: %v", def, err)
		}
		if conv.Model != good.ID || !strings.Contains(conv.SystemPrompt, "We ship on Friday.") {
			t.Errorf("default %s: asked with %s, want %s", def, conv.Model, good.ID)
		}
	}
	// A default that can answer is kept.
	st, _ := s.GetSettings()
	st.DefaultChatModel = good.ID
	if _, err := s.SaveSettings(st); err != nil {
		t.Fatal(err)
	}
	if conv, err := s.AskAboutTranscript(tr.ID); err != nil || conv.Model != good.ID {
		t.Errorf("good default: %v %+v", err, conv.Model)
	}
}
