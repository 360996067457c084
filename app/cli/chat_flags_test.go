package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/engine"
	"hark/mlx/mlxtest"
)

type chatJSON struct {
	Text         string                `json:"text"`
	Tokens       []int                 `json:"tokens"`
	FinishReason string                `json:"finish_reason"`
	Logprobs     []engine.TokenLogprob `json:"logprobs"`
}

func chatJSONOnce(t *testing.T, args ...string) chatJSON {
	t.Helper()
	out, errs, code := runChatCLI(t, "", append([]string{"chat", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r chatJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return r
}

// Stop strings end the reply and are never printed; logprobs come with
// their alternatives; the sampling flags reach the engine (top-k 1 is
// greedy whatever the temperature).
func TestChatSamplingFlags(t *testing.T) {
	dir := filepath.Join(mlxtest.Assets(t, "models", "stories260K"), "hf")
	base := []string{"--model", dir, "--raw", "-p", "Once upon a time", "--max-tokens", "40"}
	greedy := chatJSONOnce(t, append(base, "--temp", "0")...)
	if len(greedy.Text) < 30 {
		t.Fatalf("greedy reply too short: %q", greedy.Text)
	}
	topK1 := chatJSONOnce(t, append(base, "--temp", "1.5", "--top-k", "1", "--seed", "9", "--presence-penalty", "0", "--min-p", "0.1", "--top-p", "0.9")...)
	if topK1.Text != greedy.Text {
		t.Fatalf("--top-k 1: %q, greedy %q", topK1.Text, greedy.Text)
	}
	stop := greedy.Text[12:18]
	cut := chatJSONOnce(t, append(base, "--temp", "0", "--stop", "no-such-text", "--stop", stop)...)
	if want := greedy.Text[:strings.Index(greedy.Text, stop)]; cut.Text != want || cut.FinishReason != "stop" {
		t.Fatalf("--stop %q: %q (%s), want %q", stop, cut.Text, cut.FinishReason, want)
	}
	// Streaming to stdout never shows the stop string either.
	out, _, code := runChatCLI(t, "", append([]string{"chat"}, append(base, "--temp", "0", "--stop", stop)...)...)
	if code != 0 || strings.Contains(out, stop) || strings.TrimSpace(out) != strings.TrimSpace(cut.Text) {
		t.Fatalf("streamed %q", out)
	}
	lp := chatJSONOnce(t, append(base, "--temp", "0", "--logprobs", "2")...)
	if len(lp.Logprobs) != len(lp.Tokens) || len(lp.Logprobs[0].Top) != 2 || lp.Logprobs[0].Top[0].Token != lp.Tokens[0] {
		t.Fatalf("logprobs %+v for tokens %v", lp.Logprobs, lp.Tokens)
	}
	pen := chatJSONOnce(t, append(base, "--temp", "0", "--repetition-penalty", "1.8", "--frequency-penalty", "1.5")...)
	if pen.Text == greedy.Text {
		t.Fatal("the penalties changed nothing")
	}
}

func TestChatJSONSchemaFlag(t *testing.T) {
	dir := filepath.Join(mlxtest.Assets(t, "families", "qwen3-a"), "hf")
	schema := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(schema, []byte(`{"type":"object","properties":{"ok":{"type":"boolean"},"n":{"type":"integer","minimum":10,"maximum":12}},"required":["ok","n"],"additionalProperties":false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, seed := range []string{"1", "2", "3"} {
		r := chatJSONOnce(t, "--model", dir, "-p", "JSON please", "--temp", "1", "--seed", seed, "--max-tokens", "60", "--json-schema", schema)
		var doc struct {
			OK *bool `json:"ok"`
			N  *int  `json:"n"`
		}
		dec := json.NewDecoder(strings.NewReader(r.Text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&doc); err != nil || doc.OK == nil || doc.N == nil || *doc.N < 10 || *doc.N > 12 {
			t.Fatalf("seed %s: %q: %v", seed, r.Text, err)
		}
	}
	r := chatJSONOnce(t, "--model", dir, "-p", "x", "--temp", "1", "--seed", "4", "--max-tokens", "50", "--json-object")
	var obj map[string]any
	if err := json.Unmarshal([]byte(r.Text), &obj); err != nil {
		t.Fatalf("--json-object: %q: %v", r.Text, err)
	}
}

func TestChatFlagErrors(t *testing.T) {
	dir := filepath.Join(mlxtest.Assets(t, "families", "qwen3-a"), "hf")
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"type":"string","format":"uri"}`), 0o644)
	tools := filepath.Join(t.TempDir(), "tools.json")
	os.WriteFile(tools, []byte(`{"not":"a list"}`), 0o644)
	cases := map[string][]string{
		"unsupported keyword format":              {"--json-schema", bad},
		"exclude each other":                      {"--think", "--no-think"},
		"has no thinking switch":                  {"--no-think"},
		"want a JSON list of tool definitions":    {"--tools", tools},
		"--logprobs 21 must be in [0, 20]":        {"--logprobs", "21"},
		"--json-schema and --json-object exclude": {"--json-schema", bad, "--json-object"},
	}
	for want, extra := range cases {
		_, errs, code := runChatCLI(t, "", append([]string{"chat", "--model", dir, "-p", "x"}, extra...)...)
		if code == 0 || !strings.Contains(errs, want) {
			t.Errorf("%v: exit %d, %q; want %q", extra, code, errs, want)
		}
	}
}
