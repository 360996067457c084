package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/tokenizer"
)

func runChatCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}, args)
	return out.String(), errb.String(), code
}

func TestChatRawFromBOSPrintsGoldenContinuation(t *testing.T) {
	mlxtest.NoLeaks(t)
	root := mlxtest.Assets(t, "models", "stories260K")
	dir := filepath.Join(root, "hf")
	data, err := os.ReadFile(filepath.Join(root, "expected_greedy_ids_first100.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, f := range strings.Fields(string(data))[:20] {
		id, _ := strconv.Atoi(f)
		ids = append(ids, id)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := tok.Decode(ids, true)
	out, errOut, code := runChatCLI(t, "", "chat", "--model", dir, "--raw", "-p", "", "--temp", "0", "--max-tokens", "20")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != want {
		t.Fatalf("stdout %q\nwant   %q", out, want)
	}
	exp, _ := os.ReadFile(filepath.Join(root, "expected.txt"))
	if !strings.HasPrefix(string(exp), out) || len(out) < 40 {
		t.Fatalf("%q is not the start of llama2.c's text", out)
	}
}

func TestChatJSONAndBaseModelPrompt(t *testing.T) {
	mlxtest.NoLeaks(t)
	dir := mlxtest.Assets(t, "models", "stories260K", "hf")
	// no chat template: the prompt is continued as plain text
	out, errOut, code := runChatCLI(t, "", "chat", "--model", dir, "-p", "Once upon a time", "--temp", "0.8", "--seed", "3", "--max-tokens", "12", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Text         string `json:"text"`
		Tokens       []int  `json:"tokens"`
		FinishReason string `json:"finish_reason"`
		LoadNS       int64  `json:"load_ns"`
		Stats        struct {
			PromptTokens    int     `json:"prompt_tokens"`
			GeneratedTokens int     `json:"generated_tokens"`
			GenerationTPS   float64 `json:"generation_tokens_per_second"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if res.FinishReason != "length" || len(res.Tokens) != 12 || res.Stats.GeneratedTokens != 12 || res.Stats.PromptTokens < 5 || res.Text == "" || res.LoadNS <= 0 {
		t.Fatalf("result %+v", res)
	}
	// same seed, same text
	out2, _, _ := runChatCLI(t, "", "chat", "--model", dir, "-p", "Once upon a time", "--temp", "0.8", "--seed", "3", "--max-tokens", "12", "--json")
	if out2 != out && !strings.Contains(out2, strconv.Quote(res.Text)) {
		t.Fatalf("seeded rerun gave different text:\n%s\n%s", out, out2)
	}
}

func TestChatREPLAndUsage(t *testing.T) {
	mlxtest.NoLeaks(t)
	dir := mlxtest.Assets(t, "models", "stories260K", "hf")
	out, errOut, code := runChatCLI(t, "Once upon a time\nThe dog ran\n/exit\n", "chat", "--model", dir, "--temp", "0", "--max-tokens", "8")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if lines := strings.Split(strings.TrimRight(out, "\n"), "\n"); len(lines) < 2 {
		t.Fatalf("want two replies, got %q", out)
	}
	// the second turn reuses the first turn's cache
	if !strings.Contains(errOut, "reused)") || strings.Count(errOut, "tokens,") != 2 {
		t.Fatalf("stats: %s", errOut)
	}
	turns := strings.Split(errOut, "\n")
	var second string
	for _, l := range turns {
		if strings.Contains(l, "tokens,") {
			second = l
		}
	}
	if strings.Contains(second, "(0 reused)") {
		t.Fatalf("second turn reused nothing: %s", second)
	}
	if _, _, code := runChatCLI(t, "", "chat"); code != ExitUsage {
		t.Fatalf("missing --model exit %d", code)
	}
	if _, e, code := runChatCLI(t, "", "chat", "--model", t.TempDir()); code != ExitError || e == "" {
		t.Fatalf("bad model dir exit %d", code)
	}
}
