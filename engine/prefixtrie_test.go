package engine

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
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

// Two clients sending the same system prompt at once prefill its full
// blocks once: the second copies them from the trie, and both get the
// tokens they get alone.
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
	got := make([]*Result, 2)
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if got[i], err = e.GenerateBatched(context.Background(), p, opt, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	reused := got[0].Stats.ReusedTokens + got[1].Stats.ReusedTokens
	if reused != 2*PrefixBlock || min(got[0].Stats.ReusedTokens, got[1].Stats.ReusedTokens) != 0 {
		t.Errorf("reused %d and %d tokens; want one client to reuse the other's %d", got[0].Stats.ReusedTokens, got[1].Stats.ReusedTokens, 2*PrefixBlock)
	}
	after := e.Counters()
	if p := after.PrefilledTokens - before.PrefilledTokens; p != len(prompts[0])+len(prompts[1])-2*PrefixBlock {
		t.Errorf("prefilled %d tokens for prompts of %d and %d", p, len(prompts[0]), len(prompts[1]))
	}
	for i := range got {
		if !slices.Equal(got[i].Tokens, alone[i].Tokens) {
			t.Errorf("client %d: %v from the shared prefix, %v alone", i, got[i].Tokens, alone[i].Tokens)
		}
	}
	if st := e.PrefixCache(); st.Blocks != 2 || st.Bytes <= 0 {
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
	if _, err := probe.GenerateBatched(context.Background(), randomPrompt(9, PrefixBlock+3, 500), opt, nil); err != nil {
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
		res, err := e.GenerateBatched(context.Background(), last, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats.ReusedTokens != 0 {
			t.Fatalf("prompt %d reused %d tokens of unrelated prompts", i, res.Stats.ReusedTokens)
		}
		if st := e.PrefixCache(); st.Bytes > st.Limit || st.Blocks > 3 {
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
