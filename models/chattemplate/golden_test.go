package chattemplate

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"hark/mlx/mlxtest"
)

// goldenCase is one line of chat-templates/golden.jsonl.
type goldenCase struct {
	ID                  string    `json:"id"`
	Template            string    `json:"template"`
	Messages            []Message `json:"messages"`
	Tools               []any     `json:"-"`
	AddGenerationPrompt bool      `json:"add_generation_prompt"`
	Extra               *Object   `json:"extra"`
	Expected            *string   `json:"expected"`
	Error               *string   `json:"error"`
}

func readGolden(t testing.TB) (dir string, cases []goldenCase) {
	t.Helper()
	dir = mlxtest.Assets(t, "chat-templates")
	f, err := os.Open(filepath.Join(dir, "golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		var c goldenCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("golden line %d: %v", n, err)
		}
		var raw struct {
			Tools json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("golden line %d: %v", n, err)
		}
		tools, err := DecodeJSON(raw.Tools)
		if err != nil {
			t.Fatalf("golden line %d tools: %v", n, err)
		}
		if l, ok := tools.([]any); ok {
			c.Tools = l
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return dir, cases
}

func (c *goldenCase) extra() map[string]any {
	m := map[string]any{}
	if c.Extra != nil {
		for _, k := range c.Extra.Keys() {
			m[k], _ = c.Extra.Get(k)
		}
	}
	return m
}

func mlxAssets(t testing.TB) string { return mlxtest.Assets(t) }
