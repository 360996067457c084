package engine

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
)

// batchCase is one model and the prompts its rows start from.
type batchCase struct {
	name    string
	dir     string
	prompts [][]int
}

// generateTogether runs every prompt through e.GenerateBatched at once,
// each in its own goroutine with the context and options row gives it,
// and returns the results in prompt order. A failure is reported with
// t.Error and leaves its result nil.
func generateTogether(t *testing.T, e *Engine, prompts [][]int, row func(i int) (context.Context, Options)) []*Result {
	got := make([]*Result, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, opt := row(i)
			r, err := e.GenerateBatched(ctx, p, opt, nil)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = r
		}()
	}
	wg.Wait()
	return got
}

func batchCases(t *testing.T) []batchCase {
	t.Helper()
	stories := mlxtest.Assets(t, "models", "stories260K", "hf")
	cases := []batchCase{{"stories260K", stories, [][]int{
		{1, 403}, {1, 403, 9, 57, 300, 42, 11}, {1, 250, 12}, {1, 76, 88, 301, 4, 22, 9, 10, 411, 5, 77}, {1, 9},
	}}, glm4MoeBatchCase(t, stories)}
	// Every family the batch serves: qwen3-a has q/k norms, gemma3-a
	// window-8 sliding layers (rows run past their window in the batch),
	// qwen3_moe and mixtral experts that rows pick independently.
	for _, fam := range []string{"qwen3-a", "gemma3-a", "llama-a", "mistral-a", "qwen2-a", "phi3-a", "qwen3_moe", "mixtral"} {
		dir := mlxtest.Assets(t, "families", fam)
		raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
		if err != nil {
			t.Fatal(err)
		}
		var exp struct {
			PromptIDs []int `json:"prompt_ids"`
		}
		if err := json.Unmarshal(raw, &exp); err != nil {
			t.Fatal(err)
		}
		p := exp.PromptIDs
		if len(p) < 6 {
			t.Fatalf("%s: prompt of %d tokens", fam, len(p))
		}
		long := append(append(append([]int(nil), p...), p[1:]...), p[2:]...)
		cases = append(cases, batchCase{fam, filepath.Join(dir, "hf"), [][]int{p, p[:3], long, p[:len(p)-2], append([]int{p[0]}, p[3:]...)}})
	}
	return append(cases, packedQ4Case(t))
}

// packedQ4Case is a generated 4-bit qwen2 whose matmuls all take the
// packed 4-bit kernels (rows of multiples of 128 values, groups of 64):
// on a CPU with AMX-INT8 a step of 4 or more rows runs the AMX kernel and
// one of fewer rows, like a request alone, runs VNNI.
func packedQ4Case(t *testing.T) batchCase {
	t.Helper()
	tokDir := mlxtest.Assets(t, "tokenizers", "qwen3")
	dir := t.TempDir()
	shape := llmtest.Shape{Hidden: 256, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 64, Intermediate: 512, Vocab: 151936}
	if err := llmtest.Llama(shape, "qwen2", true).Write(dir, 11, llmtest.Quant{Bits: 4, GroupSize: 64}); err != nil {
		t.Fatal(err)
	}
	linkFiles(t, tokDir, dir, "tokenizer.json", "tokenizer_config.json")
	return batchCase{"qwen2-q4-packed", dir, [][]int{
		{9707, 11, 1879}, {785, 3974, 13876, 38835, 34208, 916}, {40, 1079}, {3838, 374, 279, 6722, 315, 9625, 30, 576}, {17, 10},
	}}
}

// Rows that decode together get the tokens each gets alone, at
// temperature 0 and sampled with a fixed seed, while rows of different
// lengths join at different times and leave at different times.
func TestBatchedEqualsAlone(t *testing.T) {
	for _, c := range batchCases(t) {
		t.Run(c.name, func(t *testing.T) {
			e, err := Load(c.dir, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if !e.Batchable(Options{}) {
				t.Fatalf("%s does not batch", c.name)
			}
			opts := make([]Options, len(c.prompts))
			for i := range opts {
				seed := uint64(7 + i)
				opts[i] = Options{MaxTokens: 12 + 5*i}
				if i%2 == 1 {
					opts[i].Sampling = Sampling{Temperature: 0.9, TopP: 0.95, Seed: &seed}
				}
			}
			alone := make([]*Result, len(c.prompts))
			for i, p := range c.prompts {
				if alone[i], err = e.Generate(context.Background(), p, opts[i], nil); err != nil {
					t.Fatal(err)
				}
			}
			steps0 := e.BatchSteps()
			got := make([]*Result, len(c.prompts))
			var wg sync.WaitGroup
			// The last row joins once the first has its fourth token, so
			// rows join a batch that is already decoding.
			// The other rows start once the first has its first token, and
			// the first waits there (on the loop, between steps) until they
			// are queued: on a loaded machine a row could otherwise finish
			// before the next one is even scheduled.
			late, first := make(chan struct{}), make(chan struct{})
			var once, firstOnce sync.Once
			opts[0].OnToken = func(n int) {
				if n == 1 {
					firstOnce.Do(func() { close(first) })
					for deadline := time.Now().Add(30 * time.Second); e.BatchStats().Rows < len(c.prompts)-1 && time.Now().Before(deadline); {
						time.Sleep(time.Millisecond)
					}
				}
				if n == 4 {
					once.Do(func() { close(late) })
				}
			}
			for i, p := range c.prompts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					switch {
					case i == len(c.prompts)-1:
						<-late
					case i > 0:
						<-first
					}
					var streamed []byte
					r, err := e.GenerateBatched(context.Background(), p, opts[i], func(s string) error {
						streamed = append(streamed, s...)
						return nil
					})
					if err != nil {
						t.Error(err)
						return
					}
					if string(streamed) != r.Text {
						t.Errorf("row %d streamed %q, returned %q", i, streamed, r.Text)
					}
					got[i] = r
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			total := 0
			for i := range got {
				total += len(got[i].Tokens)
				if !slices.Equal(got[i].Tokens, alone[i].Tokens) || got[i].Text != alone[i].Text || got[i].FinishReason != alone[i].FinishReason {
					t.Errorf("row %d: batched %v %q (%s), alone %v %q (%s)", i, got[i].Tokens, got[i].Text, got[i].FinishReason, alone[i].Tokens, alone[i].Text, alone[i].FinishReason)
				}
			}
			// Each row's first token comes from its prefill; the rest
			// from decode steps, which must have been shared.
			steps := e.BatchSteps() - steps0
			if steps >= total-len(got) {
				t.Errorf("%d decode steps for %d tokens of %d rows: the rows did not decode together", steps, total, len(got))
			}
			t.Logf("%d rows, %d tokens, %d batched steps", len(got), total, steps)
		})
	}
}

// Cancelling one row ends it within a step and leaves the others' tokens
// exactly as they are alone.
func TestBatchedCancelOneRow(t *testing.T) {
	c := batchCases(t)[0]
	e, err := Load(c.dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	opt := Options{MaxTokens: 30}
	alone := make([]*Result, 3)
	for i := range alone {
		if alone[i], err = e.Generate(context.Background(), c.prompts[i], opt, nil); err != nil {
			t.Fatal(err)
		}
		if len(alone[i].Tokens) < 10 {
			t.Fatalf("row %d alone: only %d tokens, too few to cancel in the middle", i, len(alone[i].Tokens))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := generateTogether(t, e, c.prompts[:3], func(i int) (context.Context, Options) {
		if i != 1 {
			return context.Background(), opt
		}
		o := opt
		o.OnToken = func(n int) {
			if n == 5 {
				cancel()
			}
		}
		return ctx, o
	})
	if t.Failed() {
		return
	}
	if got[1].FinishReason != FinishCancelled || len(got[1].Tokens) != 5 || !slices.Equal(got[1].Tokens, alone[1].Tokens[:5]) {
		t.Errorf("cancelled row: %s after %v (alone %v)", got[1].FinishReason, got[1].Tokens, alone[1].Tokens)
	}
	for _, i := range []int{0, 2} {
		if !slices.Equal(got[i].Tokens, alone[i].Tokens) || got[i].FinishReason != alone[i].FinishReason {
			t.Errorf("row %d next to the cancelled one: %v (%s), alone %v (%s)", i, got[i].Tokens, got[i].FinishReason, alone[i].Tokens, alone[i].FinishReason)
		}
	}
}

// A family the batch does not serve (recurrent state) still answers,
// alone, through GenerateBatched.
func TestBatchedFallsBackAlone(t *testing.T) {
	dir := filepath.Join(mlxtest.Assets(t, "families", "qwen3_5"), "hf")
	e, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Batchable(Options{}) {
		t.Fatal("qwen3_5 (gated delta, recurrent state) claims to batch")
	}
	res, err := e.GenerateBatched(context.Background(), []int{1, 2, 3}, Options{MaxTokens: 3}, nil)
	if err != nil || len(res.Tokens) == 0 {
		t.Fatalf("%v, %v", res, err)
	}
	if e.BatchSteps() != 0 {
		t.Errorf("%d batched steps on a model that does not batch", e.BatchSteps())
	}
}

// An error from one row's onText ends that row with the error; the
// others go on unchanged.
func TestBatchedTextError(t *testing.T) {
	c := batchCases(t)[0]
	e, err := Load(c.dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	opt := Options{MaxTokens: 40}
	alone, err := e.Generate(context.Background(), c.prompts[0], opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("client went away")
	var wg sync.WaitGroup
	var got *Result
	var gotErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		var err error
		got, err = e.GenerateBatched(context.Background(), c.prompts[0], opt, nil)
		if err != nil {
			t.Error(err)
		}
	}()
	go func() {
		defer wg.Done()
		_, gotErr = e.GenerateBatched(context.Background(), c.prompts[2], opt, func(string) error { return boom })
	}()
	wg.Wait()
	if !errors.Is(gotErr, boom) {
		t.Errorf("failing onText: got %v, want %v", gotErr, boom)
	}
	if got == nil || !slices.Equal(got.Tokens, alone.Tokens) {
		t.Errorf("row next to the failing one: %v, alone %v", got, alone.Tokens)
	}
}

// Logprobs come out of the batch as they do alone, and OnLogprob sees
// each before the token's text.
func TestBatchedLogprobs(t *testing.T) {
	c := batchCases(t)[0]
	e, err := Load(c.dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	opt := Options{MaxTokens: 10, Logprobs: true, TopLogprobs: 3}
	alone := make([]*Result, 3)
	for i := range alone {
		if alone[i], err = e.Generate(context.Background(), c.prompts[i], opt, nil); err != nil {
			t.Fatal(err)
		}
	}
	seen := make([][]TokenLogprob, 3)
	got := generateTogether(t, e, c.prompts[:3], func(i int) (context.Context, Options) {
		o := opt
		o.OnLogprob = func(lp TokenLogprob) { seen[i] = append(seen[i], lp) }
		return context.Background(), o
	})
	if t.Failed() {
		return
	}
	for i := range got {
		a, b := alone[i].Logprobs, got[i].Logprobs
		if len(a) != len(b) || len(seen[i]) != len(b) || len(b) != len(got[i].Tokens) {
			t.Fatalf("row %d: %d logprobs batched (%d seen, %d tokens), %d alone", i, len(b), len(seen[i]), len(got[i].Tokens), len(a))
		}
		for j := range a {
			if a[j].Token != b[j].Token || math.Abs(a[j].Logprob-b[j].Logprob) > 1e-4 || len(a[j].Top) != len(b[j].Top) || a[j].Top[0].Token != b[j].Top[0].Token {
				t.Errorf("row %d token %d: batched %+v, alone %+v", i, j, b[j], a[j])
			}
		}
	}
}
