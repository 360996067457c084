package engine

import (
	"context"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
)

// storiesTokenized writes m (seed 5, 4-bit in groups of 32) beside the
// stories260K tokenizer and loads it: a generated model the engine can
// prompt with text. m's vocabulary must be 512, the tokenizer's.
func storiesTokenized(t *testing.T, m llmtest.Model) *Engine {
	t.Helper()
	tokDir := mlxtest.Assets(t, "models", "stories260K", "hf")
	dir := t.TempDir()
	if err := m.Write(dir, 5, llmtest.Quant{Bits: 4, GroupSize: 32}); err != nil {
		t.Fatal(err)
	}
	linkFiles(t, tokDir, dir, "tokenizer.json", "tokenizer_config.json")
	e, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// fullLength is greedy options for max tokens with e's EOS ids biased
// away: on random weights every run then has its full length.
func fullLength(e *Engine, max int) Options {
	opt := Options{MaxTokens: max, Sampling: Sampling{LogitBias: map[int]float64{}}}
	for _, id := range e.EOS {
		opt.LogitBias[id] = -1e4
	}
	return opt
}

// genAndCold returns gen, which replies to a prompt with opt through e's
// prefix cache, and cold, which replies with the cache emptied first.
func genAndCold(t *testing.T, e *Engine, opt Options) (gen func([]int) *Result, cold func([]int) string) {
	gen = func(p []int) *Result {
		r, err := e.Generate(context.Background(), p, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cold = func(p []int) string {
		e.ResetCache()
		return gen(p).Text
	}
	return gen, cold
}

// extendCached replies to a first prompt (p1), then to p2, a prompt that
// extends everything the first reply left cached: all of it must be
// reused, and the reply be the one a cold cache gives. name labels a
// failure.
func extendCached(t *testing.T, e *Engine, gen func([]int) *Result, cold func([]int) string, name string) (p1, p2 []int) {
	t.Helper()
	p1 = e.RawPrompt("Once upon a time there was a little dog")
	r1 := gen(p1)
	cached := append(append([]int(nil), p1...), r1.Tokens[:len(r1.Tokens)-1]...)
	p2 = append(append([]int(nil), cached...), e.Tokenizer.Encode(" and a cat", false)...)
	if r := gen(p2); r.Stats.ReusedTokens != len(cached) || r.Text != cold(p2) {
		t.Fatalf("%s: extension reused %d of %d", name, r.Stats.ReusedTokens, len(cached))
	}
	return p1, p2
}

// A generated Gemma 3 (sliding window 8) with the stories260K tokenizer:
// the prefix cache must reuse, roll back, or start over, and always give
// what a cold cache gives.
func TestPrefixCacheWithSlidingWindow(t *testing.T) {
	mlxtest.NoLeaks(t)
	shape := llmtest.Tiny
	shape.Vocab = 512
	e := storiesTokenized(t, llmtest.Gemma3(shape, 8, 2, false))
	defer e.Close()
	if e.Model.Info().Family != "gemma3" || e.Template != nil {
		t.Fatalf("loaded %+v", e.Model.Info())
	}
	opt := fullLength(e, 10)
	ctx := context.Background()
	gen, cold := genAndCold(t, e, opt)
	// extend: everything cached is reused
	p1, p2 := extendCached(t, e, gen, cold, "gemma3")
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
