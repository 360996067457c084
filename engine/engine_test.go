package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/nn"
)

func loadStories(t *testing.T) (*Engine, string) {
	t.Helper()
	root := mlxtest.Assets(t, "models", "stories260K")
	e, err := Load(filepath.Join(root, "hf"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, root
}

// storiesGreedy is llama2.c's first 100 greedy token ids from BOS for
// stories260K, whose asset folder is root.
func storiesGreedy(t *testing.T, root string) []int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "expected_greedy_ids_first100.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for _, f := range strings.Fields(string(data)) {
		id, _ := strconv.Atoi(f)
		want = append(want, id)
	}
	return want
}

func TestGreedyFromBOSMatchesLlama2c(t *testing.T) {
	mlxtest.NoLeaks(t)
	e, root := loadStories(t)
	want := storiesGreedy(t, root)
	expText, err := os.ReadFile(filepath.Join(root, "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	// llama2.c keeps its state in float32: the reference's configuration.
	res, err := e.Generate(context.Background(), e.RawPrompt(""), Options{MaxTokens: len(want), KVBits: nn.KVFloat32Bits}, func(s string) error {
		streamed.WriteString(s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != FinishLength || len(res.Tokens) != len(want) {
		t.Fatalf("finish %q after %d tokens", res.FinishReason, len(res.Tokens))
	}
	for i := range want {
		if res.Tokens[i] != want[i] {
			t.Fatalf("token %d: %d, llama2.c %d", i, res.Tokens[i], want[i])
		}
	}
	if streamed.String() != res.Text {
		t.Fatalf("streamed %q but result %q", streamed.String(), res.Text)
	}
	if len(res.Text) < 200 || !strings.HasPrefix(string(expText), res.Text) {
		t.Fatalf("text %q is not the start of llama2.c's %q", res.Text, expText[:min(len(expText), 300)])
	}
	st := res.Stats
	if st.PromptTokens != 1 || st.PrefilledTokens != 1 || st.GeneratedTokens != 100 || st.TimeToFirstToken <= 0 || st.GenerationTPS <= 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestPrefixCacheReusesConversation(t *testing.T) {
	mlxtest.NoLeaks(t)
	e, _ := loadStories(t)
	ctx := context.Background()
	p1 := e.RawPrompt("Once upon a time, there was a dog")
	r1, err := e.Generate(ctx, p1, Options{MaxTokens: 12}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The follow-up extends the whole conversation so far.
	p2 := append(append(append([]int(nil), p1...), r1.Tokens...), e.Tokenizer.Encode(" The cat said", false)...)
	before := e.Counters()
	r2, err := e.Generate(ctx, p2, Options{MaxTokens: 12}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Every generated token but the last went through the model.
	wantReused := len(p1) + len(r1.Tokens) - 1
	if r2.Stats.ReusedTokens != wantReused || r2.Stats.PrefilledTokens != len(p2)-wantReused {
		t.Fatalf("reused %d prefilled %d, want %d and %d", r2.Stats.ReusedTokens, r2.Stats.PrefilledTokens, wantReused, len(p2)-wantReused)
	}
	if got := e.Counters().PrefilledTokens - before.PrefilledTokens; got != len(p2)-wantReused {
		t.Fatalf("counter says %d tokens prefilled", got)
	}
	// The reply must be what a cold cache gives.
	e.ResetCache()
	cold, err := e.Generate(ctx, p2, Options{MaxTokens: 12}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cold.Text != r2.Text || cold.Stats.PrefilledTokens != len(p2) {
		t.Fatalf("cached reply %q, cold %q (prefilled %d)", r2.Text, cold.Text, cold.Stats.PrefilledTokens)
	}
	// A diverging prompt keeps only the shared prefix.
	p3 := append(append([]int(nil), p1[:4]...), e.Tokenizer.Encode(" big red ball", false)...)
	r3, err := e.Generate(ctx, p3, Options{MaxTokens: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r3.Stats.ReusedTokens != 4 {
		t.Fatalf("diverging prompt reused %d tokens, want 4", r3.Stats.ReusedTokens)
	}
}

func TestChunkedPrefillMatchesOneShot(t *testing.T) {
	mlxtest.NoLeaks(t)
	e, _ := loadStories(t)
	p := e.RawPrompt("Lily and Ben went to the park. They saw a big tree and a little bird.")
	var texts []string
	for _, chunk := range []int{1, 5, 512} {
		e.ResetCache()
		r, err := e.Generate(context.Background(), p, Options{MaxTokens: 20, PrefillChunk: chunk}, nil)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, r.Text)
	}
	if texts[0] != texts[2] || texts[1] != texts[2] || texts[2] == "" {
		t.Fatalf("chunked prefill changed the output: %q", texts)
	}
}

func TestSeedReproducible(t *testing.T) {
	mlxtest.NoLeaks(t)
	e, _ := loadStories(t)
	gen := func(seed uint64) string {
		opt := Options{MaxTokens: 40, Sampling: Sampling{Temperature: 1, TopP: 0.95, Seed: &seed}}
		r, err := e.Generate(context.Background(), e.RawPrompt("Once"), opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Text
	}
	a, b, c := gen(7), gen(7), gen(8)
	if a != b {
		t.Fatalf("same seed, different text:\n%q\n%q", a, b)
	}
	if a == c {
		t.Fatalf("seeds 7 and 8 gave the same 40 sampled tokens: %q", a)
	}
}

func TestStopStringNeverShown(t *testing.T) {
	mlxtest.NoLeaks(t)
	e, root := loadStories(t)
	exp, err := os.ReadFile(filepath.Join(root, "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// "a big" first appears mid-story in llama2.c's greedy text.
	stop := "a big"
	cut := strings.Index(string(exp), stop)
	if cut < 0 {
		t.Fatal("stop string not in expected.txt")
	}
	var pieces []string
	res, err := e.Generate(context.Background(), e.RawPrompt(""), Options{MaxTokens: 200, Stop: []string{"zebra", stop}}, func(s string) error {
		pieces = append(pieces, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != FinishStop || res.Text != string(exp[:cut]) {
		t.Fatalf("finish %q text %q, want %q", res.FinishReason, res.Text, exp[:cut])
	}
	if got := strings.Join(pieces, ""); got != res.Text {
		t.Fatalf("streamed %q", got)
	}
}

func TestCancelStopsGeneration(t *testing.T) {
	mlxtest.NoLeaks(t)
	e, _ := loadStories(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	res, err := e.Generate(ctx, e.RawPrompt(""), Options{MaxTokens: 200}, func(string) error {
		n++
		if n == 3 {
			cancel()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != FinishCancelled || len(res.Tokens) > 10 {
		t.Fatalf("finish %q after %d tokens", res.FinishReason, len(res.Tokens))
	}
}

func TestMemoryEstimateRefusesLargeModel(t *testing.T) {
	e := MemoryEstimate{Weights: 20 << 30, KVCache: 1 << 30, Context: 8192, Total: 23 << 30, Available: 16e9}
	err := checkFits(e)
	if err == nil || !strings.Contains(err.Error(), "16.0 GB is available") {
		t.Fatalf("err %v", err)
	}
	e.Available = 32 << 30
	if err := checkFits(e); err != nil {
		t.Fatal(err)
	}
	if availableMemory() <= 0 {
		t.Fatal("available memory unknown on this platform")
	}
}

func TestLoadRefusesModelThatDoesNotFit(t *testing.T) {
	mlxtest.NoLeaks(t)
	dir := mlxtest.Assets(t, "models", "stories260K", "hf")
	defer func(f func() int64) { memoryAvailable = f }(memoryAvailable)
	memoryAvailable = func() int64 { return 1e6 }
	_, err := Load(dir, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "1.0 MB is available") {
		t.Fatalf("loaded into 1 MB: %v", err)
	}
	e, err := Load(dir, LoadOptions{SkipMemoryCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
}

func TestMemoryEstimateCountsWeights(t *testing.T) {
	mlxtest.NoLeaks(t)
	e, _ := loadStories(t)
	// f32 weights are held as stored: the estimate's weight part equals
	// what the loader holds.
	if e.Memory.Weights != e.Model.Info().WeightBytes {
		t.Fatalf("estimate %d bytes, loaded %d", e.Memory.Weights, e.Model.Info().WeightBytes)
	}
	// 5 layers, 4 kv heads of 8, 512 positions, k and v in the default
	// cache
	if want := 2 * 5 * 4 * 8 * defaultKVBytes(t) * 512; e.Memory.KVCache != want {
		t.Fatalf("kv estimate %d, want %d", e.Memory.KVCache, want)
	}
}

// generation_config.json: eos_token_id as an int or a list joins config's
// EOS; do_sample false means greedy defaults.
func TestGenerationConfig(t *testing.T) {
	mlxtest.NoLeaks(t)
	src := mlxtest.Assets(t, "models", "stories260K", "hf")
	for _, c := range []struct {
		json string
		eos  []int
		temp float64
		topP float64
	}{
		{`{"eos_token_id": 5, "do_sample": false, "temperature": 0.9}`, []int{5, 2}, 0, 0},
		{`{"eos_token_id": [7, 9], "temperature": 0.6, "top_p": 0.9}`, []int{7, 9, 2}, 0.6, 0.9},
	} {
		dir := t.TempDir()
		linkFiles(t, src, dir, "config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
		if err := os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := Load(dir, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(e.EOS) != fmt.Sprint(c.eos) {
			t.Errorf("%s: EOS %v, want %v", c.json, e.EOS, c.eos)
		}
		if e.Defaults.Temperature != c.temp || e.Defaults.TopP != c.topP {
			t.Errorf("%s: defaults %+v", c.json, e.Defaults)
		}
		e.Close()
	}
}

// linkFiles links the named files of dir from into dir to, for model
// directories assembled from shared parts.
func linkFiles(t *testing.T, from, to string, names ...string) {
	t.Helper()
	for _, f := range names {
		if err := os.Symlink(filepath.Join(from, f), filepath.Join(to, f)); err != nil {
			t.Fatal(err)
		}
	}
}

// errAfter is a context that reports cancelled from the (n+1)-th look on:
// a Stop that lands in the middle of prefill, deterministically.
type errAfter struct {
	context.Context
	n, asked int
}

func (c *errAfter) Err() error {
	if c.asked++; c.asked > c.n {
		return context.Canceled
	}
	return nil
}

// Stop reaches prefill: a long prompt stops at the next chunk boundary,
// with nothing generated.
func TestCancelStopsPrefill(t *testing.T) {
	mlxtest.NoLeaks(t)
	e, _ := loadStories(t)
	prompt := e.Tokenizer.Encode(strings.Repeat("Lily and Tom went to the park. ", 12), true)
	ctx := &errAfter{Context: context.Background(), n: 3}
	res, err := e.Generate(ctx, prompt, Options{MaxTokens: 50, PrefillChunk: 8}, func(string) error {
		t.Fatal("a token was generated after the stop")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != FinishCancelled || res.Stats.PrefilledTokens != 24 || len(res.Tokens) != 0 {
		t.Fatalf("finish %q after prefilling %d of %d tokens, %d generated", res.FinishReason, res.Stats.PrefilledTokens, len(prompt), len(res.Tokens))
	}
}

// defaultKVBytes is what DefaultKV keeps per value: float32 or f16.
func defaultKVBytes(t *testing.T) int64 {
	t.Helper()
	switch DefaultKV {
	case nn.KVQuant{}:
		return 4
	case nn.KVQuant{Bits: nn.KVHalfBits}:
		return 2
	}
	t.Fatalf("no per-value size known for DefaultKV %+v", DefaultKV)
	return 0
}
