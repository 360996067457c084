package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/tokenizer"
)

// familyGoldens are the folders of ../shared/assets/families whose
// families Hark runs.
var familyGoldens = []string{"llama-a", "mistral-a", "qwen2-a", "qwen3-a", "gemma3-a", "phi3-a", "qwen3_moe", "mixtral", "deepseek_v2", "gpt_oss", "qwen3_5", "qwen3_5_moe", "gemma4"}

// End to end, as a user runs it: `hark chat --model DIR --raw -p TEXT
// --temp 0 --max-tokens 32` continues each family's golden prompt with
// llama.cpp's greedy ids, from a prompt of the same token count (so the
// BOS rule matches HF's), and prints their text.
func TestChatRawReproducesFamilyGoldens(t *testing.T) {
	mlxtest.NoLeaks(t)
	root := mlxtest.Assets(t, "families")
	for _, v := range familyGoldens {
		t.Run(v, func(t *testing.T) {
			var g struct {
				Text   string `json:"prompt_text"`
				Prompt []int  `json:"prompt_ids"`
				Greedy []int  `json:"greedy_ids"`
			}
			data, err := os.ReadFile(filepath.Join(root, v, "expected.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &g); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, v, "hf")
			args := []string{"chat", "--model", dir, "--raw", "-p", g.Text, "--temp", "0", "--max-tokens", "32"}
			out, errOut, code := runChatCLI(t, "", append(args, "--json")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var res struct {
				Tokens []int `json:"tokens"`
				Stats  struct {
					PromptTokens int `json:"prompt_tokens"`
				} `json:"stats"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if res.Stats.PromptTokens != len(g.Prompt) {
				t.Errorf("prompt is %d tokens, HF's is %d", res.Stats.PromptTokens, len(g.Prompt))
			}
			if !slices.Equal(res.Tokens, g.Greedy) {
				t.Errorf("greedy ids differ from llama.cpp's:\n got %v\nwant %v", res.Tokens, g.Greedy)
			}
			// and the plain command prints their text
			out, errOut, code = runChatCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			tok, err := tokenizer.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			// The text of those ids as a stream shows it: a byte run that
			// turns out invalid (random weights emit such) keeps the
			// characters already shown, where a one-shot Decode would not.
			st := tok.NewStream()
			st.SkipSpecial = true
			var want strings.Builder
			for _, id := range g.Greedy {
				want.WriteString(st.Add(id))
			}
			want.WriteString(st.Flush())
			if out != want.String() {
				t.Errorf("stdout %q\nwant   %q", out, want.String())
			}
		})
	}
}
