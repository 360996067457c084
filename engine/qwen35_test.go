package engine

import (
	"context"
	"path/filepath"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
)

// A generated Qwen3.5 (linear-attention layers with a recurrent state)
// with the stories260K tokenizer: the prefix cache reuses a conversation
// that extends what is cached, starts over when the prompt rolls back
// into it (a recurrent state cannot forget positions), and always gives
// what a cold cache gives.
func TestPrefixCacheWithRecurrentState(t *testing.T) {
	mlxtest.NoLeaks(t)
	tokDir := mlxtest.Assets(t, "models", "stories260K", "hf")
	for _, experts := range []int{0, 4} {
		dir := t.TempDir()
		shape := llmtest.Tiny
		shape.Vocab = 512
		if err := llmtest.Qwen35(shape, experts, 2, true).Write(dir, 5, llmtest.Quant{Bits: 4, GroupSize: 32}); err != nil {
			t.Fatal(err)
		}
		linkFiles(t, tokDir, dir, "tokenizer.json", "tokenizer_config.json")
		e, err := Load(dir, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]string{0: "qwen3_5", 4: "qwen3_5_moe"}[experts]
		if e.Model.Info().Family != want {
			t.Fatalf("loaded %+v", e.Model.Info())
		}
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
		p2 := append(append([]int(nil), cached...), e.Tokenizer.Encode(" and a cat", false)...)
		if r := gen(p2); r.Stats.ReusedTokens != len(cached) || r.Text != cold(p2) {
			t.Fatalf("%s: extension reused %d of %d", want, r.Stats.ReusedTokens, len(cached))
		}
		gen(p2)
		p3 := append(append([]int(nil), p2[:len(p2)-2]...), e.Tokenizer.Encode(" red", false)...)
		if r := gen(p3); r.Stats.ReusedTokens != 0 || r.Stats.PrefilledTokens != len(p3) || r.Text != cold(p3) {
			t.Fatalf("%s: rollback reused %d (prefilled %d of %d)", want, r.Stats.ReusedTokens, r.Stats.PrefilledTokens, len(p3))
		}
		// chunked prefill through the engine gives the one-shot reply
		e.ResetCache()
		chunked := opt
		chunked.PrefillChunk = 3
		r, err := e.Generate(ctx, p3, chunked, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Text != cold(p3) {
			t.Fatalf("%s: prefill in chunks of 3 changed the reply", want)
		}
		e.Close()
	}
}

// The memory estimate gives keys and values only to the full-attention
// layers of a hybrid model, and the linear-attention layers their fixed
// recurrent state.
func TestMemoryEstimateHybrid(t *testing.T) {
	mlxtest.NoLeaks(t)
	dir := filepath.Join(mlxtest.Assets(t, "families"), "qwen3_5", "hf")
	e, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// 1 full layer of 2 kv heads of 32 for 8192 positions; 3 linear
	// layers of 4 value heads' 16x16 state and 3 conv inputs of 128.
	want := int64(2*1*2*32*4*8192 + 3*(4*16*16+3*128)*4)
	if e.Memory.KVCache != want {
		t.Fatalf("kv estimate %d, want %d", e.Memory.KVCache, want)
	}
}
