package engine

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/nn"
)

// specFamilies are the family goldens Hark runs, with their cache kinds:
// plain everywhere, sliding windows (gemma3-a, gpt_oss), the MLA latent
// cache (deepseek_v2), shared layers (gemma4), recurrent state beside
// attention (qwen3_5, qwen3_5_moe: a round rolls back whole and the kept
// tokens are read again), and the quantized cache where the heads fit.
var specFamilies = []string{"llama-a", "mistral-a", "qwen2-a", "qwen3-a", "gemma3-a", "phi3-a", "qwen3_moe", "mixtral", "deepseek_v2", "gpt_oss", "gemma4", "qwen3_5", "qwen3_5_moe"}

func loadFamily(t *testing.T, v string) (*Engine, []int) {
	t.Helper()
	dir := mlxtest.Assets(t, "families", v)
	var g struct {
		PromptIDs []int `json:"prompt_ids"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	e, err := Load(filepath.Join(dir, "hf"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, g.PromptIDs
}

// At temperature 0, speculative decoding writes exactly what plain
// decoding writes, on every family and cache kind, with prompt lookup and
// with a draft model (another family: the goldens share one tokenizer);
// and the prefix cache it leaves behind serves the next turn as a fresh
// cache would.
func TestSpeculativeGreedyIsPlainGreedy(t *testing.T) {
	mlxtest.NoLeaks(t)
	draft, err := LoadDraft(mustLoadFamily(t, "qwen2-a"), filepath.Join(mlxtest.Assets(t, "families", "llama-a"), "hf"))
	if err != nil {
		t.Fatal(err)
	}
	defer draft.Close()
	ctx := context.Background()
	for _, v := range specFamilies {
		t.Run(v, func(t *testing.T) {
			e, prompt := loadFamily(t, v)
			// The model drafting for itself: every draft is kept, which
			// takes the path of long accepted runs and the bonus token,
			// and rounds on its own cache kinds on the draft side too.
			self, err := LoadDraft(e, e.Dir)
			if err != nil {
				t.Fatal(err)
			}
			defer self.Close()
			kvs := []nn.KVQuant{{Bits: nn.KVFloat32Bits}, {Bits: nn.KVHalfBits}} // DefaultKV is one of them
			if e.CheckKV(nn.KVQuant{Bits: 8, Group: 32}) == nil {
				kvs = append(kvs, nn.KVQuant{Bits: 8, Group: 32})
			}
			for _, kv := range kvs {
				base := Options{MaxTokens: 40, KVBits: kv.Bits, KVGroup: kv.Group}
				e.ResetCache()
				want, err := e.Generate(ctx, prompt, base, nil)
				if err != nil {
					t.Fatal(err)
				}
				// The next turn: the reply and a few more prompt tokens.
				next := append(append(slices.Clone(prompt), want.Tokens...), prompt[1:6]...)
				wantNext, err := e.Generate(ctx, next, base, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range []struct {
					name string
					d    Drafter
					n    int
				}{
					{"prompt lookup", PromptLookup{}, 0},
					{"prompt lookup, 1-grams, 3 tokens", PromptLookup{MaxNgram: 1, MinNgram: 1, Tokens: 3}, 0},
					{"draft model", draft, 5},
					{"itself as draft model", self, 6},
					{"itself, last draft spoilt", spoilt{self}, 4},
				} {
					opt := base
					opt.Draft, opt.DraftTokens = d.d, d.n
					e.ResetCache()
					got, err := e.Generate(ctx, prompt, opt, nil)
					if err != nil {
						t.Fatalf("%s, kv %+v: %v", d.name, kv, err)
					}
					if !slices.Equal(got.Tokens, want.Tokens) || got.Text != want.Text || got.FinishReason != want.FinishReason {
						t.Fatalf("%s, kv %+v: speculative %v (%s)\nplain %v (%s)", d.name, kv, got.Tokens, got.FinishReason, want.Tokens, want.FinishReason)
					}
					if got.Stats.Drafted == 0 && d.name != "prompt lookup" { // 2-grams may never recur
						t.Fatalf("%s: nothing drafted", d.name)
					}
					t.Logf("kv %d bits, %s: %d drafted, %d accepted", kv.Bits, d.name, got.Stats.Drafted, got.Stats.Accepted)
					gotNext, err := e.Generate(ctx, next, base, nil)
					if err != nil {
						t.Fatal(err)
					}
					if gotNext.Stats.ReusedTokens == 0 || !slices.Equal(gotNext.Tokens, wantNext.Tokens) {
						t.Fatalf("%s: next turn after rollbacks reused %d tokens and wrote %v, want %v", d.name, gotNext.Stats.ReusedTokens, gotNext.Tokens, wantNext.Tokens)
					}
				}
			}
		})
	}
}

func mustLoadFamily(t *testing.T, v string) *Engine {
	e, _ := loadFamily(t, v)
	return e
}

// A draft model with another tokenizer is refused, naming both models.
func TestDraftWithOtherTokenizerRefused(t *testing.T) {
	e, _ := loadFamily(t, "llama-a")
	_, err := LoadDraft(e, filepath.Join(mlxtest.Assets(t, "models", "stories260K"), "hf"))
	if err == nil || !strings.Contains(err.Error(), "draft model hf cannot draft for hf: another tokenizer (512 tokens, not 1024)") {
		t.Fatalf("got %v", err)
	}
}

// A cache kind without rounds is refused clearly.
type noRounds struct{ nn.Cache }

func TestSpeculativeRefusesCacheWithoutRollback(t *testing.T) {
	e, _ := loadStories(t)
	e.caches = e.Model.NewCaches()
	e.caches[2] = noRounds{e.caches[2]}
	e.cacheKV = e.KV // the generation's setting: the caches are kept
	_, err := e.Generate(context.Background(), e.RawPrompt("Once"), Options{MaxTokens: 5, Draft: PromptLookup{}}, nil)
	if err == nil || !strings.Contains(err.Error(), "layer 2's cache (engine.noRounds) cannot roll back drafted tokens; decode without a drafter") {
		t.Fatalf("got %v", err)
	}
}

// The n-gram lookup proposes what followed the latest earlier match of
// the longest tail that has one.
func TestPromptLookup(t *testing.T) {
	h := []int{1, 2, 3, 9, 9, 1, 2, 3, 7, 8, 5, 2, 3}
	if got := lookup(h, 3, 1, 4); !slices.Equal(got, []int{7, 8, 5, 2}) {
		t.Fatalf("got %v", got)
	}
	if got := lookup([]int{4, 5, 6}, 3, 1, 4); got != nil {
		t.Fatalf("no match, got %v", got)
	}
	if got := lookup([]int{4, 4}, 3, 1, 4); !slices.Equal(got, []int{4}) {
		t.Fatalf("got %v", got)
	}
}

// chiSquareCrit is the 0.999 quantile of chi-square with df degrees of
// freedom (Wilson-Hilferty).
func chiSquareCrit(df int) float64 {
	const z = 3.090
	k := float64(df)
	c := 1 - 2/(9*k) + z*math.Sqrt(2/(9*k))
	return k * c * c * c
}

// chiSquare compares counts of n samples with the distribution p, bins
// expecting fewer than 5 pooled into one.
func chiSquare(counts map[int]int, p dist, n int) (stat float64, df int) {
	var restE, restO float64
	for id, pv := range p {
		e := pv * float64(n)
		o := float64(counts[id])
		if e < 5 {
			restE += e
			restO += o
			continue
		}
		stat += (o - e) * (o - e) / e
		df++
	}
	if restE > 0 {
		stat += (restO - restE) * (restO - restE) / restE
		df++
	}
	return stat, df - 1
}

// At temperature > 0 the rejection rule leaves the model's distribution
// unchanged: 2,000 tokens produced by verifying a draft at the first
// generated position of stories260K pass a chi-square test against the
// model's own distribution there, for a deterministic draft (prompt
// lookup's) and for drafts drawn from a draft model (the 4-bit
// stories260K). Keeping every draft instead fails the same test, so the
// test can tell.
func TestSpeculativeSamplingKeepsDistribution(t *testing.T) {
	mlxtest.NoLeaks(t)
	e, _ := loadStories(t)
	d, err := LoadDraft(e, mlxtest.Assets(t, "models", "stories260K-4bit-g32"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	samp := Sampling{Temperature: 1.2}
	history := e.RawPrompt("Once upon a time, there was a")
	logitsOf := func(en *Engine) []float32 {
		en.ResetCache()
		en.mu.Lock()
		defer en.mu.Unlock()
		g := &generation{e: en}
		en.reuse(history)
		return slices.Clone(g.step(history, true))
	}
	target, draftLogits := logitsOf(e), logitsOf(d.Engine)
	p := newSampler(samp).distribution(slices.Clone(target), history)
	q := newSampler(samp).distribution(slices.Clone(draftLogits), history)
	// The deterministic draft: the target's third most likely token, so
	// both keeping and rejecting happen often.
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return -cmpF(p[a], p[b]) })
	fixed := order[2]
	t.Logf("p(draft) = %.3f; top token p = %.3f", p[fixed], p[order[0]])
	const n = 2000
	g := &generation{e: e}
	for _, tc := range []struct {
		name   string
		q      dist
		honest bool
	}{
		{"deterministic draft", nil, true},
		{"draft model", q, true},
		{"keep every draft (control)", q, false},
	} {
		counts := map[int]int{}
		for i := range n {
			seed := uint64(i)
			s := samp
			s.Seed = &seed
			smp := newSampler(s)
			draft := fixed
			if tc.q != nil {
				draft = drawDense(smp, tc.q)
			}
			tok := draft
			if tc.honest {
				if ok, alt := g.verify(smp, slices.Clone(target), history, draft, tc.q); !ok {
					tok = alt
				}
			}
			counts[tok]++
		}
		stat, df := chiSquare(counts, p, n)
		crit := chiSquareCrit(df)
		t.Logf("%s: chi-square %.1f, %d df, 0.999 critical %.1f", tc.name, stat, df, crit)
		if tc.honest && stat > crit {
			t.Errorf("%s: the tokens do not follow the model's distribution (chi-square %.1f > %.1f)", tc.name, stat, crit)
		}
		if !tc.honest && stat <= crit {
			t.Errorf("%s: the test cannot tell the draft model's distribution from the target's", tc.name)
		}
	}
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Sampling with a drafter runs end to end and a seed fixes its text.
func TestSpeculativeSamplingSeeded(t *testing.T) {
	e, _ := loadStories(t)
	seed := uint64(7)
	opt := Options{Sampling: Sampling{Temperature: 0.8, TopK: 40, Seed: &seed}, MaxTokens: 60, Draft: PromptLookup{MinNgram: 1}}
	a, err := e.Generate(context.Background(), e.RawPrompt("Once upon a time"), opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.ResetCache()
	b, err := e.Generate(context.Background(), e.RawPrompt("Once upon a time"), opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != b.Text || a.Stats.Drafted == 0 || len(a.Tokens) != 60 {
		t.Fatalf("%q (%d drafted) vs %q", a.Text, a.Stats.Drafted, b.Text)
	}
}

// A drafter with structured output or logprobs would skip them: refused.
func TestSpeculativeRefusesConstraintAndLogprobs(t *testing.T) {
	mlxtest.NoLeaks(t)
	e, prompt := loadFamily(t, "qwen3-a")
	_, err := e.Generate(context.Background(), prompt, Options{MaxTokens: 4, Draft: PromptLookup{}, Logprobs: true}, nil)
	if err == nil || !strings.Contains(err.Error(), "does not combine") {
		t.Fatalf("err %v", err)
	}
}

// spoilt drafts as d but changes the last of two or more drafts, so a
// round keeps some drafts and rolls back the rest (the partial rollback,
// which a recurrent state does by rolling back whole and reading the kept
// tokens again).
type spoilt struct{ d Drafter }

func (s spoilt) defaultTokens() int { return s.d.defaultTokens() }

func (s spoilt) draft(g *generation, history []int, n int) ([]int, []dist, error) {
	toks, dists, err := s.d.draft(g, history, n)
	if err == nil && len(toks) >= 2 {
		toks[len(toks)-1] = (toks[len(toks)-1] + 1) % g.e.Model.Info().VocabSize
	}
	return toks, dists, err
}
