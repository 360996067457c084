package engine

import (
	"context"
	"path/filepath"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
	"hark/models/nn"
)

// A generated Qwen3.5 (linear-attention layers with a recurrent state)
// with the stories260K tokenizer: the prefix cache reuses a conversation
// that extends what is cached, starts over when the prompt rolls back
// into it (a recurrent state cannot forget positions), and always gives
// what a cold cache gives.
func TestPrefixCacheWithRecurrentState(t *testing.T) {
	mlxtest.NoLeaks(t)
	for _, experts := range []int{0, 4} {
		shape := llmtest.Tiny
		shape.Vocab = 512
		e := storiesTokenized(t, llmtest.Qwen35(shape, experts, 2, true))
		want := map[int]string{0: "qwen3_5", 4: "qwen3_5_moe"}[experts]
		if e.Model.Info().Family != want {
			t.Fatalf("loaded %+v", e.Model.Info())
		}
		opt := fullLength(e, 10)
		ctx := context.Background()
		gen, cold := genAndCold(t, e, opt)
		_, p2 := extendCached(t, e, gen, cold, want)
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
	// 1 full layer of 2 kv heads of 32 for 8192 positions, in the
	// default cache; 3 linear layers of 4 value heads' 16x16 state and 3
	// conv inputs of 128, kept in float32 whatever the KV setting.
	state := int64(3 * (4*16*16 + 3*128) * 4)
	want := 2*1*2*32*defaultKVBytes(t)*8192 + state
	if e.Memory.KVCache != want {
		t.Fatalf("kv estimate %d, want %d", e.Memory.KVCache, want)
	}
	// An f16 cache halves the keys and values only, not the state.
	half, err := Estimate(dir, EstimateOptions{KV: nn.KVQuant{Bits: nn.KVHalfBits}})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(2*1*2*32*2*8192) + state; half.KVCache != want {
		t.Fatalf("f16 kv estimate %d, want %d", half.KVCache, want)
	}
}
