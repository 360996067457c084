package engine

import (
	"context"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
)

// A generated Gemma 3 (sliding window 8) with the stories260K tokenizer:
// the prefix cache must reuse, roll back, or start over, and always give
// what a cold cache gives.
func TestPrefixCacheWithSlidingWindow(t *testing.T) {
	mlxtest.NoLeaks(t)
	tokDir := mlxtest.Assets(t, "models", "stories260K", "hf")
	dir := t.TempDir()
	shape := llmtest.Tiny
	shape.Vocab = 512
	if err := llmtest.Gemma3(shape, 8, 2, false).Write(dir, 5, llmtest.Quant{Bits: 4, GroupSize: 32}); err != nil {
		t.Fatal(err)
	}
	linkFiles(t, tokDir, dir, "tokenizer.json", "tokenizer_config.json")
	e, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Model.Info().Family != "gemma3" || e.Template != nil {
		t.Fatalf("loaded %+v", e.Model.Info())
	}
	// random weights: keep EOS ids out so every run has full length
	opt := Options{MaxTokens: 10, Sampling: Sampling{LogitBias: map[int]float64{}}}
	for _, id := range e.EOS {
		opt.LogitBias[id] = -1e4
	}
	ctx := context.Background()
	gen := func(p []int) *Result {
		r, err := e.Generate(ctx, p, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cold := func(p []int) string {
		e.ResetCache()
		return gen(p).Text
	}
	p1 := e.RawPrompt("Once upon a time there was a little dog")
	r1 := gen(p1)
	cached := append(append([]int(nil), p1...), r1.Tokens[:len(r1.Tokens)-1]...)

	// extend: everything cached is reused
	p2 := append(append([]int(nil), cached...), e.Tokenizer.Encode(" and a cat", false)...)
	if r := gen(p2); r.Stats.ReusedTokens != len(cached) || r.Text != cold(p2) {
		t.Fatalf("extension reused %d of %d", r.Stats.ReusedTokens, len(cached))
	}
	// a short rollback, within what the sliding window keeps beyond itself
	one := opt
	one.MaxTokens = 1 // the cache then holds exactly p2
	if _, err := e.Generate(ctx, p2, one, nil); err != nil {
		t.Fatal(err)
	}
	p3 := append(append([]int(nil), p2[:len(p2)-2]...), e.Tokenizer.Encode(" red", false)...)
	if r := gen(p3); r.Stats.ReusedTokens != len(p2)-2 || r.Text != cold(p3) {
		t.Fatalf("rollback reused %d, want %d", r.Stats.ReusedTokens, len(p2)-2)
	}
	// a prompt diverging long before the window: start over
	gen(p3)
	p4 := append(append([]int(nil), p1[:3]...), e.Tokenizer.Encode(" big red ball", false)...)
	if r := gen(p4); r.Stats.ReusedTokens != 0 || r.Stats.PrefilledTokens != len(p4) || r.Text != cold(p4) {
		t.Fatalf("divergent prompt reused %d (prefilled %d)", r.Stats.ReusedTokens, r.Stats.PrefilledTokens)
	}
}
