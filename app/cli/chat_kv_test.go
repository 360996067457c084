package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

// hark chat takes --kv-bits/--kv-group and --draft: at temperature 0 the
// drafted reply is the plain one, and --json's stats carry the cache and
// drafting figures. Settings the model cannot take, and a draft model with
// another tokenizer, are refused by name.
func TestChatKVAndDraftFlags(t *testing.T) {
	mlxtest.NoLeaks(t)
	dir := mlxtest.Assets(t, "models", "stories260K", "hf")
	type result struct {
		Text  string `json:"text"`
		Stats struct {
			KVBits   int   `json:"kv_bits"`
			KVBytes  int64 `json:"kv_cache_bytes"`
			Drafted  int   `json:"drafted_tokens"`
			Accepted int   `json:"accepted_tokens"`
		} `json:"stats"`
	}
	run := func(extra ...string) result {
		t.Helper()
		args := append([]string{"chat", "--model", dir, "-p", "Once upon a time", "--temp", "0", "--max-tokens", "120", "--json", "--kv-bits", "8", "--kv-group", "32"}, extra...)
		out, errOut, code := runChatCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut)
		}
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	plain, spec := run(), run("--draft", "prompt-lookup", "--draft-tokens", "4")
	if plain.Text != spec.Text || spec.Stats.KVBits != 8 || spec.Stats.KVBytes <= 0 || spec.Stats.Drafted == 0 {
		t.Fatalf("plain %+v\nspeculative %+v", plain, spec)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kv-bits", "8"}, "for this model use kv_group 32"},
		{[]string{"--kv-bits", "5"}, "kv_bits 5"},
		{[]string{"--draft", mlxtest.Assets(t, "families", "llama-a", "hf")}, "draft model hf cannot draft for hf: another tokenizer (1024 tokens, not 512)"},
	} {
		_, errOut, code := runChatCLI(t, "", append([]string{"chat", "--model", dir, "-p", "x", "--max-tokens", "2"}, tc.args...)...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want an error saying %q", tc.args, code, errOut, tc.want)
		}
	}
}
