package app

import (
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/nn"
)

// A conversation can keep its KV cache in 8 bits and draft by prompt
// lookup: at temperature 0 the reply is the one the defaults write, and
// the stats say how the cache was kept and what was drafted. A KV setting
// the model cannot take fails the reply with the values it can.
func TestChatKVBitsAndDraft(t *testing.T) {
	mlxtest.NoLeaks(t)
	a, _, cm := storiesChat(t)
	s := a.Service
	events := subscribeChat(t, a)
	reply := func(sm ChatSampling) ChatEvent {
		t.Helper()
		c, err := s.CreateConversation(NewConversation{Model: cm.ID, Sampling: sm})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SendMessage(c.ID, SendRequest{Text: "Once upon a time"}); err != nil {
			t.Fatal(err)
		}
		return last(events.reply(c.ID, nil))
	}
	f32 := reply(ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(150), KVBits: ptr(nn.KVFloat32Bits)})
	plain := reply(ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(150), KVBits: ptr(8), KVGroup: ptr(32)})
	spec := reply(ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(150), KVBits: ptr(8), KVGroup: ptr(32), Draft: ptr("prompt-lookup")})
	if plain.Type != "done" || spec.Type != "done" || spec.Message.Content != plain.Message.Content {
		t.Fatalf("plain %+v\nspeculative %+v", plain.Message, spec.Message)
	}
	if st := spec.Stats; st.KVBits != 8 || st.KVBytes <= 0 || st.KVBytes >= f32.Stats.KVBytes || st.Drafted == 0 {
		t.Fatalf("stats %+v (float32 cache %+v)", st, f32.Stats)
	}
	bad := reply(ChatSampling{MaxTokens: ptr(4), KVBits: ptr(8), KVGroup: ptr(64)})
	if bad.Type != "error" || !strings.Contains(bad.Error, "use kv_group 32") {
		t.Fatalf("64-group cache on 8-wide heads: %+v", bad)
	}
	for _, sm := range []ChatSampling{{KVBits: ptr(3)}, {KVGroup: ptr(32)}, {Draft: ptr("llama")}} {
		if _, err := s.CreateConversation(NewConversation{Model: cm.ID, Sampling: sm}); err == nil {
			t.Errorf("%+v accepted", sm)
		}
	}
}
