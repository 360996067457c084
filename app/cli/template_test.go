package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

// TestTemplateCommand renders the Qwen3 golden cases through the CLI with
// the real tokenizer_config.json, whose chat_template is the golden one.
func TestTemplateCommand(t *testing.T) {
	dir := mlxtest.Assets(t, "tokenizers", "qwen3")
	golden := mlxtest.Assets(t, "chat-templates", "golden.jsonl")
	f, err := os.Open(golden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		var c struct {
			ID       string          `json:"id"`
			Template string          `json:"template"`
			Messages json.RawMessage `json:"messages"`
			Tools    json.RawMessage `json:"tools"`
			AGP      bool            `json:"add_generation_prompt"`
			Extra    json.RawMessage `json:"extra"`
			Expected *string         `json:"expected"`
			Error    *string         `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Template != "qwen3" {
			continue
		}
		n++
		req, _ := json.Marshal(map[string]any{"messages": c.Messages, "tools": c.Tools, "add_generation_prompt": c.AGP, "extra": c.Extra})
		code, out, errs := runCLI(t, string(req), "template", "--tokenizer", dir)
		switch {
		case c.Error != nil:
			if code != ExitError || !strings.Contains(errs, *c.Error) {
				t.Errorf("%s: exit %d stderr %q, want error %q", c.ID, code, errs, *c.Error)
			}
		case code != ExitOK:
			t.Errorf("%s: exit %d: %s", c.ID, code, errs)
		case out != *c.Expected:
			t.Errorf("%s:\n got %q\nwant %q", c.ID, out, *c.Expected)
		}
	}
	if n == 0 {
		t.Fatal("no qwen3 cases in the goldens")
	}
}

func TestTemplateErrors(t *testing.T) {
	dir := mlxtest.Assets(t, "tokenizers", "qwen3")
	code, _, errs := runCLI(t, "{not json", "template", "--tokenizer", dir)
	if code != ExitError || !strings.Contains(errs, "stdin") {
		t.Errorf("bad json: exit %d stderr %q", code, errs)
	}
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "tokenizer_config.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, `{"messages":[]}`, "template", "--tokenizer", empty)
	if code != ExitError || !strings.Contains(errs, "no chat_template") {
		t.Errorf("no template: exit %d stderr %q", code, errs)
	}
}
