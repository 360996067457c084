package app

import (
	"context"
	"strings"
	"testing"
)

// An unsupported model_type was listed as a chat model with no problem
// shown (issue 17): it is in the Library as unsupported with the reason,
// kept out of the chat models, and verify says it will not load.
func TestUnsupportedModelTypeIsNotAChatModel(t *testing.T) {
	files := storiesModel(t)
	mamba := map[string][]byte{"config.json": []byte(`{"architectures":["MambaForCausalLM"],"model_type":"mamba"}`), "model.safetensors": files["model.safetensors"], "tokenizer.json": files["tokenizer.json"]}
	a, _ := chatApp(t, func(cache string) {
		chatSnapshot(t, cache, "test/stories", files)
		chatSnapshot(t, cache, "test/mamba", mamba)
	})
	s := a.Service
	waitChatModel(t, s, fingerprint("test/stories"))
	if _, err := s.RescanModels(); err != nil {
		t.Fatal(err)
	}
	m, err := s.GetModel(fingerprint("test/mamba"))
	if err != nil || m.Supported || !strings.Contains(m.Reason, `model_type "mamba" is not supported`) || !strings.Contains(m.Reason, "llama") {
		t.Fatalf("unsupported model %+v %v", m, err)
	}
	cms, err := s.ListChatModels()
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms {
		if cm.ID == m.ID {
			t.Fatalf("offered for chat: %+v", cm)
		}
	}
	res, err := a.library().Verify(context.Background(), m.ID, nil)
	if err != nil || res.OK || !strings.Contains(strings.Join(res.Problems, "|"), "Hark cannot load it") {
		t.Fatalf("verify %+v %v", res, err)
	}
}
