package engine

import (
	"context"
	"sync"
	"testing"
)

// Batched rows report the keys and values they really hold (their share
// of the batch's storage, padding included), and BatchStats follows the
// rows: all four counted while they run, decoding together, none left
// after, their memory given back.
func TestBatchedKVBytesAndStats(t *testing.T) {
	c := batchCases(t)[0]
	e, err := Load(c.dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	est, err := Estimate(c.dir, EstimateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	perToken := est.KVCache / int64(est.Context)
	if perToken <= 0 {
		t.Fatalf("estimate gives %d KV bytes per token", perToken)
	}
	prompts := c.prompts[:4]
	var mu sync.Mutex
	var during []BatchStats
	got := generateTogether(t, e, prompts, func(i int) (context.Context, Options) {
		opt := Options{MaxTokens: 24}
		if i == 0 {
			opt.OnToken = func(n int) {
				if n%4 == 0 {
					mu.Lock()
					during = append(during, e.BatchStats())
					mu.Unlock()
				}
			}
		}
		return context.Background(), opt
	})
	if t.Failed() {
		return
	}
	widest := 0
	for i, r := range got {
		widest = max(widest, len(prompts[i])+len(r.Tokens))
	}
	for i, r := range got {
		need := perToken * int64(len(prompts[i])+len(r.Tokens)-1)
		// The batch holds the widest row's columns for every row, and
		// grows by nn's step (256) at a time.
		most := perToken * int64(widest+2*256)
		if r.Stats.KVCacheBytes < need || r.Stats.KVCacheBytes > most {
			t.Errorf("row %d (%d positions) reports %d KV bytes, want between %d and %d", i, len(prompts[i])+len(r.Tokens), r.Stats.KVCacheBytes, need, most)
		}
	}
	peakRows, peakKV := 0, int64(0)
	for _, s := range during {
		peakRows, peakKV = max(peakRows, s.Rows), max(peakKV, s.KVBytes)
	}
	st := e.BatchStats()
	if st.PeakActive < 2 || peakRows < 2 || peakKV <= 0 {
		t.Errorf("while running: %+v; after: %+v; the rows did not decode together", during, st)
	}
	if st.Rows != 0 || st.Active != 0 || st.KVBytes != 0 {
		t.Errorf("after every row ended: %+v, want no rows and no KV", st)
	}
	t.Logf("peak %d active, %d rows seen, %d KV bytes at most; row 0 held %d", st.PeakActive, peakRows, peakKV, got[0].Stats.KVCacheBytes)
}
