package grammar_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"hark/engine"
	"hark/engine/grammar"
	"hark/mlx/mlxtest"
)

// A random-weight model writes gibberish; under a schema it still writes a
// document the grammar accepts and JSON parses, and stops on its own when
// the document ends. (tests/schema checks the same with ajv, 200 seeds.)
func TestRandomModelWritesValidJSON(t *testing.T) {
	e, err := engine.Load(filepath.Join(mlxtest.Assets(t, "families", "qwen3-a"), "hf"), engine.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	schema := []byte(`{"type":"object","properties":{"id":{"type":"integer","minimum":3,"maximum":9},"tags":{"type":"array","items":{"type":"string","maxLength":6},"maxItems":2},"ok":{"type":"boolean"}},"required":["id","tags","ok"],"additionalProperties":false}`)
	g, err := grammar.Compile(schema, grammar.VocabOf(e))
	if err != nil {
		t.Fatal(err)
	}
	ids := e.RawPrompt("JSON:")
	for seed := uint64(0); seed < 20; seed++ {
		s := seed
		opt := engine.Options{Sampling: engine.Sampling{Temperature: 1, Seed: &s}, MaxTokens: 60 + int(seed)*5, Constraint: g.Start()}
		res, err := e.Generate(context.Background(), ids, opt, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var doc struct {
			ID   *int     `json:"id"`
			Tags []string `json:"tags"`
			OK   *bool    `json:"ok"`
		}
		if err := json.Unmarshal([]byte(res.Text), &doc); err != nil {
			t.Fatalf("seed %d: %v: %q", seed, err, res.Text)
		}
		if !g.Accepts([]byte(res.Text)) || doc.ID == nil || *doc.ID < 3 || *doc.ID > 9 || doc.OK == nil || len(doc.Tags) > 2 {
			t.Fatalf("seed %d: invalid document %q", seed, res.Text)
		}
		if len(res.Tokens) > opt.MaxTokens {
			t.Fatalf("seed %d: %d tokens over the budget of %d", seed, len(res.Tokens), opt.MaxTokens)
		}
	}
	// Greedy decoding with a constraint is deterministic and valid too.
	res, err := e.Generate(context.Background(), ids, engine.Options{MaxTokens: 80, Constraint: g.Start()}, nil)
	if err != nil || !g.Accepts([]byte(res.Text)) {
		t.Fatalf("greedy: %v %q", err, res.Text)
	}
	if res.FinishReason != engine.FinishStop {
		t.Errorf("greedy: finish %q, want stop once the document is closed", res.FinishReason)
	}
}

func TestForSchemaRefusesByName(t *testing.T) {
	e, err := engine.Load(filepath.Join(mlxtest.Assets(t, "families", "qwen3-a"), "hf"), engine.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := grammar.ForSchema(e, []byte(`{"type":"string","contentEncoding":"base64"}`)); err == nil {
		t.Fatal("contentEncoding was accepted")
	}
	if s := grammar.ForJSONObject(e); s.Complete() || s.Final() {
		t.Fatal("an empty document counts as complete")
	}
}
