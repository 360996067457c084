package engine

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"hark/mlx/mlxtest"
)

func randomPrompt(seed uint64, n, vocab int) []int {
	rng := rand.New(rand.NewPCG(seed, 1))
	p := make([]int, n)
	p[0] = 1
	for i := 1; i < n; i++ {
		p[i] = 2 + rng.IntN(vocab-2)
	}
	return p
}

// Two clients sending the same system prompt at once prefill it once: the
// second copies its whole blocks and the shared start of the partial one
// from the trie, and both get the tokens they get alone.
func TestPrefixSharedAcrossClients(t *testing.T) {
	e, err := Load(mlxtest.Assets(t, "models", "stories260K", "hf"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	system := randomPrompt(3, 2*PrefixBlock+20, 500)
	prompts := [][]int{append(slices.Clone(system), 40, 41, 42), append(slices.Clone(system), 300, 7)}
	opt := Options{MaxTokens: 16}
	alone := make([]*Result, 2)
	for i, p := range prompts {
		if alone[i], err = e.Generate(context.Background(), p, opt, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := e.Counters()
	got := generateTogether(t, e, prompts, func(int) (context.Context, Options) { return context.Background(), opt })
	if t.Failed() {
		return
	}
	reused := got[0].Stats.ReusedTokens + got[1].Stats.ReusedTokens
	if reused != len(system) || min(got[0].Stats.ReusedTokens, got[1].Stats.ReusedTokens) != 0 {
		t.Errorf("reused %d and %d tokens; want one client to reuse the other's %d", got[0].Stats.ReusedTokens, got[1].Stats.ReusedTokens, len(system))
	}
	after := e.Counters()
	if p := after.PrefilledTokens - before.PrefilledTokens; p != len(prompts[0])+len(prompts[1])-len(system) {
		t.Errorf("prefilled %d tokens for prompts of %d and %d", p, len(prompts[0]), len(prompts[1]))
	}
	for i := range got {
		if !slices.Equal(got[i].Tokens, alone[i].Tokens) {
			t.Errorf("client %d: %v from the shared prefix, %v alone", i, got[i].Tokens, alone[i].Tokens)
		}
	}
	// Two shared whole blocks, and each client's own partial last block.
	if st := e.PrefixCache(); st.Blocks != 4 || st.Bytes <= 0 {
		t.Errorf("trie after one shared system prompt: %+v", st)
	}
}

// The trie stays within its byte limit, dropping the least recently used
// prefixes, and still serves the latest.
func TestPrefixTrieBounded(t *testing.T) {
	dir := mlxtest.Assets(t, "models", "stories260K", "hf")
	probe, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{MaxTokens: 2}
	if _, err := probe.GenerateBatched(context.Background(), randomPrompt(9, PrefixBlock, 500), opt, nil); err != nil {
		t.Fatal(err)
	}
	block := probe.PrefixCache().Bytes
	probe.Close()
	if block <= 0 {
		t.Fatalf("one block takes %d bytes", block)
	}
	e, err := Load(dir, LoadOptions{PrefixCacheBytes: 3 * block})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var last []int
	for i := range 5 {
		last = randomPrompt(uint64(20+i), 2*PrefixBlock+5, 500)
		last[0] = 502 + i // unrelated from the first token (randomPrompt starts each with 1)
		res, err := e.GenerateBatched(context.Background(), last, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats.ReusedTokens != 0 {
			t.Fatalf("prompt %d reused %d tokens of unrelated prompts", i, res.Stats.ReusedTokens)
		}
		if st := e.PrefixCache(); st.Bytes > st.Limit {
			t.Fatalf("after prompt %d the trie holds %+v", i, st)
		}
	}
	res, err := e.GenerateBatched(context.Background(), append(slices.Clone(last[:2*PrefixBlock]), 17, 18), opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.ReusedTokens != 2*PrefixBlock {
		t.Errorf("the latest prefix: reused %d tokens, want %d", res.Stats.ReusedTokens, 2*PrefixBlock)
	}
}

// A prompt shorter than a block, sent again, is reused to its last token
// (which must run to give logits), and gives the same tokens.
func TestPrefixPartialBlock(t *testing.T) {
	e, err := Load(mlxtest.Assets(t, "models", "stories260K", "hf"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	p := randomPrompt(5, PrefixBlock/2, 500)
	opt := Options{MaxTokens: 12}
	first, err := e.GenerateBatched(context.Background(), p, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.GenerateBatched(context.Background(), p, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Stats.ReusedTokens != 0 || again.Stats.ReusedTokens != len(p)-1 {
		t.Errorf("reused %d then %d tokens of a %d-token prompt", first.Stats.ReusedTokens, again.Stats.ReusedTokens, len(p))
	}
	if !slices.Equal(first.Tokens, again.Tokens) {
		t.Errorf("%v fresh, %v from the trie", first.Tokens, again.Tokens)
	}
	// A prompt that shares only its first tokens reuses just those.
	q := append(slices.Clone(p[:10]), randomPrompt(6, 20, 500)[1:]...)
	q[10] = (p[10] + 1) % 500
	res, err := e.GenerateBatched(context.Background(), q, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.ReusedTokens != 10 {
		t.Errorf("shares 10 tokens, reused %d", res.Stats.ReusedTokens)
	}
}
