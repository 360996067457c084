package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/nn"
)

// With the KV cache in 8 bits, and in f16 (16), stories260K still writes
// llama2.c's first 100 greedy tokens, as with float32; stats report the
// cache's bytes, 2x less than float32 in f16, 3.2x less in 8 bits and
// 5.3x less in 4 bits (whose ids may drift).
func TestQuantizedKVKeepsStoriesGreedy(t *testing.T) {
	mlxtest.NoLeaks(t)
	e, root := loadStories(t)
	want := storiesGreedy(t, root)
	// stories260K's heads are 8 wide: 4 kv heads side by side make one
	// group of 32.
	gen := func(bits, group int) *Result {
		res, err := e.Generate(context.Background(), e.RawPrompt(""), Options{MaxTokens: len(want), KVBits: bits, KVGroup: group}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	f32, f16, q8, q4, def := gen(nn.KVFloat32Bits, 0), gen(16, 0), gen(8, 32), gen(4, 32), gen(0, 0)
	for _, r := range []struct {
		name string
		res  *Result
	}{{"float32", f32}, {"f16", f16}, {"8-bit", q8}, {"default", def}} {
		for i := range want {
			if r.res.Tokens[i] != want[i] {
				t.Fatalf("%s cache: token %d is %d, llama2.c %d", r.name, i, r.res.Tokens[i], want[i])
			}
		}
	}
	if f16.Stats.KVBits != 16 || q8.Stats.KVBits != 8 || q4.Stats.KVBits != 4 || f32.Stats.KVBits != 0 || def.Stats.KVBits != DefaultKV.Bits {
		t.Fatalf("stats kv_bits %d / %d / %d / %d, default %d", f32.Stats.KVBits, f16.Stats.KVBits, q8.Stats.KVBits, q4.Stats.KVBits, def.Stats.KVBits)
	}
	// Same capacity (256 positions) each time: the ratio is the format's,
	// 4 bytes against 2, 1 + 8/32 and 0.5 + 8/32.
	r16 := float64(f32.Stats.KVCacheBytes) / float64(f16.Stats.KVCacheBytes)
	r8 := float64(f32.Stats.KVCacheBytes) / float64(q8.Stats.KVCacheBytes)
	r4 := float64(f32.Stats.KVCacheBytes) / float64(q4.Stats.KVCacheBytes)
	t.Logf("cache bytes: f32 %d, f16 %d (%.2fx), 8-bit %d (%.2fx), 4-bit %d (%.2fx)", f32.Stats.KVCacheBytes, f16.Stats.KVCacheBytes, r16, q8.Stats.KVCacheBytes, r8, q4.Stats.KVCacheBytes, r4)
	if r16 != 2 || r8 < 3.1 || r4 < 5.2 {
		t.Fatalf("16-bit and quantized caches hold only %.2fx / %.2fx / %.2fx less than float32", r16, r8, r4)
	}
}

// A KV setting the model cannot take is refused with what it can take.
func TestKVSettingRefusedWithValidValues(t *testing.T) {
	e, _ := loadStories(t)
	for _, tc := range []struct {
		q    nn.KVQuant
		want string
	}{
		{nn.KVQuant{Bits: 8, Group: 64}, "use kv_group 32"},
		{nn.KVQuant{Bits: 8}, "use kv_group 32"},
		{nn.KVQuant{Bits: 3}, "[4 8 16] bits"},
		{nn.KVQuant{Bits: 16, Group: 32}, "needs kv_bits of a quantized cache"},
		{nn.KVQuant{Bits: 4, Group: 48}, "one of [32 64 128]"},
		{nn.KVQuant{Group: 32}, "needs kv_bits"},
	} {
		_, err := e.Generate(context.Background(), e.RawPrompt(""), Options{MaxTokens: 1, KVBits: tc.q.Bits, KVGroup: tc.q.Group}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an error saying %q", tc.q, err, tc.want)
		}
	}
	// gemma3-a's global layers have one kv head of 16: no group fits.
	g, err := Load(filepath.Join(mlxtest.Assets(t, "families", "gemma3-a"), "hf"), LoadOptions{KV: nn.KVQuant{Bits: 8, Group: 32}})
	if err == nil {
		g.Close()
		t.Fatal("gemma3-a loaded with an 8-bit cache in groups of 32")
	}
	if !strings.Contains(err.Error(), "cannot be quantized (no group size") {
		t.Fatalf("gemma3-a: %v", err)
	}
}

// The memory estimate sizes the cache in the chosen format.
func TestMemoryEstimateScalesWithKVBits(t *testing.T) {
	est := MemoryEstimate{Weights: 1000, KVCache: 4_000_000, Total: 5_000_000}
	q8 := est.withKV(nn.KVQuant{Bits: 8})
	q4 := est.withKV(nn.KVQuant{Bits: 4, Group: 32})
	h16 := est.withKV(nn.KVQuant{Bits: 16})
	f32 := est.withKV(ResolveKV(nn.KVQuant{Bits: nn.KVFloat32Bits}))
	if q8.KVCache != 1_125_000 || q4.KVCache != 750_000 || h16.KVCache != 2_000_000 || f32.KVCache != 4_000_000 {
		t.Fatalf("kv estimates %d / %d / %d / %d, want 1125000 / 750000 / 2000000 / 4000000", q8.KVCache, q4.KVCache, h16.KVCache, f32.KVCache)
	}
	if q8.Total != est.Total-est.KVCache+q8.KVCache {
		t.Fatalf("total %d does not follow the cache", q8.Total)
	}
}
