package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchDraft05B returns the draft for bench05B: the same generator, seed
// and width with 2 layers instead of 24. The generator draws tensors in
// order, so the draft holds the target's (tied) embedding and its first
// two layers: an early-exit draft, as a same-family small model would be
// for a random-weight target, which no independently drawn model could
// predict. Its tokenizer is the target's file.
// HARK_BENCH_05B_DRAFT_DIR keeps it between runs.
func benchDraft05B(b *testing.B, target string) string {
	dir, _ := bench05BLayers(b, "HARK_BENCH_05B_DRAFT_DIR", 2)
	tok, err := os.ReadFile(filepath.Join(target, "tokenizer.json"))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tok, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkDraftModel05B times greedy replies of the 0.5B bench model with
// and without its 2-layer draft (benchDraft05B), drafting 4 or 8 tokens a
// round, alternating in one run. speedup is plain time / drafted time for
// the same tokens (temperature 0: identical text); accept is the share of
// drafts kept. On these random
// weights the early layers already decide the greedy token (accept comes
// out near 1), so speedup is what drafting gains when drafts are right:
// the round's cost (draft steps, the batched check, rollback) against
// plain steps; a real pair accepts less.
func BenchmarkDraftModel05B(b *testing.B) {
	dir := bench05B(b)
	e, err := Load(dir, LoadOptions{SkipMemoryCheck: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	de, err := Load(benchDraft05B(b, dir), LoadOptions{SkipMemoryCheck: true})
	if err != nil {
		b.Fatal(err)
	}
	dm, err := NewDraftModel(e, de)
	if err != nil {
		de.Close()
		b.Fatal(err)
	}
	defer dm.Close()
	ctx := context.Background()
	prompt := []int{9707, 11, 1879, 0, 576, 1052, 264, 882}
	// Plain, then the draft proposing 4 and 8 tokens a round.
	variants := []struct {
		name   string
		draft  Drafter
		tokens int
	}{{"plain", nil, 0}, {"d4", dm, 4}, {"d8", dm, 8}}
	spent := make([]time.Duration, len(variants))
	nDrafted, nAccepted := make([]int, len(variants)), make([]int, len(variants))
	tokens := 0
	b.ResetTimer()
	for range b.N {
		for i, v := range variants {
			e.ResetCache()
			start := time.Now()
			res, err := e.Generate(ctx, prompt, Options{MaxTokens: 32, Draft: v.draft, DraftTokens: v.tokens}, nil)
			if err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
			nDrafted[i] += res.Stats.Drafted
			nAccepted[i] += res.Stats.Accepted
			if i == 0 {
				tokens += len(res.Tokens)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(tokens)/spent[0].Seconds(), "plain_tok/s")
	for i, v := range variants[1:] {
		b.ReportMetric(spent[0].Seconds()/spent[i+1].Seconds(), v.name+"_speedup")
		b.ReportMetric(float64(nAccepted[i+1])/float64(max(nDrafted[i+1], 1)), v.name+"_accept")
	}
}
