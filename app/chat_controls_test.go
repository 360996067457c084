package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/engine/grammar"
	"hark/mlx/mlxtest"
)

// qwenChatModel is the random-weight Qwen3 of the family goldens with the
// real Qwen3 chat template (thinking switch, tools) added.
func qwenChatModel(t *testing.T) map[string][]byte {
	t.Helper()
	dir := mlxtest.Assets(t, "families", "qwen3-a", "hf")
	tpl, err := os.ReadFile(mlxtest.Assets(t, "chat-templates", "templates", "qwen3.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, n := range []string{"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = b
	}
	var cfg map[string]any
	if err := json.Unmarshal(out["tokenizer_config.json"], &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["chat_template"] = string(tpl)
	out["tokenizer_config.json"], _ = json.Marshal(cfg)
	return out
}

func TestChatControls(t *testing.T) {
	files := qwenChatModel(t)
	const repo = "test/qwen3-random"
	a, _ := chatApp(t, func(cache string) { chatSnapshot(t, cache, repo, files) })
	s := a.Service
	cm := waitChatModel(t, s, fingerprint(repo))
	if cm.Completion {
		t.Fatalf("%+v: the template was not picked up", cm)
	}
	events := subscribeChat(t, a)
	send := func(sampling ChatSampling, text string) []ChatEvent {
		t.Helper()
		c, err := s.CreateConversation(NewConversation{Model: cm.ID, Sampling: sampling})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SendMessage(c.ID, SendRequest{Text: text}); err != nil {
			t.Fatal(err)
		}
		evs := events.reply(c.ID, nil)
		if end := last(evs); end.Type != "done" {
			t.Fatalf("reply ended with %+v", end)
		}
		return evs
	}

	// Structured output, token probabilities and live speed in one reply.
	schema := `{"type":"object","properties":{"city":{"type":"string","maxLength":12},"rank":{"type":"integer","minimum":1,"maximum":3}},"required":["city","rank"],"additionalProperties":false}`
	evs := send(ChatSampling{Temperature: ptr(1.0), Seed: ptr(uint64(5)), MaxTokens: ptr(80), JSON: "schema", JSONSchema: schema, Logprobs: ptr(3)}, "Best city?")
	end := last(evs)
	g, err := grammar.Compile([]byte(schema), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Accepts([]byte(end.Message.Content)) {
		t.Fatalf("reply %q is not valid against the schema", end.Message.Content)
	}
	st := end.Stats
	if len(st.Logprobs) != st.Tokens || st.Tokens == 0 {
		t.Fatalf("%d logprobs for %d tokens", len(st.Logprobs), st.Tokens)
	}
	most := 0
	for _, lp := range st.Logprobs {
		// Alternatives the schema forbids have no probability left.
		most = max(most, len(lp.Top))
		if len(lp.Top) > 3 || lp.Logprob > 0 {
			t.Fatalf("logprob %+v", lp)
		}
	}
	if most != 3 {
		t.Fatalf("never 3 alternatives")
	}
	live := 0
	for _, ev := range evs {
		if ev.Type == "delta" {
			if ev.Live == nil || ev.Live.Tokens < 1 || ev.Live.Tokens > end.Stats.Tokens {
				t.Fatalf("delta without live stats: %+v", ev)
			}
			live = ev.Live.Tokens
		}
	}
	if live == 0 {
		t.Fatal("no delta carried live stats")
	}

	// Stop strings end the reply and are never shown: take a piece of a
	// greedy reply, then ask again with it as a stop string.
	greedy := ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(30)}
	full := last(send(greedy, "Tell me something.")).Message.Content
	if len(full) < 20 {
		t.Fatalf("greedy reply too short to cut: %q", full)
	}
	stop := full[10:16]
	greedy.Stop = []string{stop, "never-written-xyz"}
	evs = send(greedy, "Tell me something.")
	got := last(evs).Message.Content
	if want := full[:strings.Index(full, stop)]; got != want || strings.Contains(deltas(evs), stop) {
		t.Fatalf("with stop %q: %q (streamed %q), want %q", stop, got, deltas(evs), want)
	}

	// The thinking switch and tools reach the template: the prompt grows.
	base := last(send(greedy, "Hi")).Stats.PromptTokens
	noThink := last(send(ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(2), Think: ptr(false)}, "Hi")).Stats.PromptTokens
	tools := `[{"type":"function","function":{"name":"get_weather","description":"Weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	withTools := last(send(ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(2), Tools: tools}, "Hi")).Stats.PromptTokens
	// JSON output turns thinking off unless asked for (no room for thoughts).
	jsonOut := last(send(ChatSampling{Temperature: ptr(0.0), MaxTokens: ptr(2), JSON: "object"}, "Hi")).Stats.PromptTokens
	if jsonOut != noThink {
		t.Errorf("JSON output prompt %d tokens, want %d (thinking off)", jsonOut, noThink)
	}
	if noThink <= base || withTools <= base+10 {
		t.Fatalf("prompt tokens: %d plain, %d without thinking, %d with tools", base, noThink, withTools)
	}
}
