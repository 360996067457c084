package engine

import "hark/models/nn"

// BatchStats is what an engine's batch holds now, readable while it runs
// (it never waits for a step): for status pages, for the runner's memory
// accounting, and for tests that must see rows really decode together.
type BatchStats struct {
	// Rows are the generations in the batch: waiting to join, prefilling
	// or decoding. A row leaves when its caller has its result.
	Rows int `json:"rows"`
	// Active rows decoded in the last step; PeakActive is the most that
	// ever decoded in one step on this engine.
	Active     int `json:"active"`
	PeakActive int `json:"peakActive"`
	// Steps is the batched decode steps run.
	Steps int `json:"steps"`
	// KVBytes is the keys and values the rows hold, the batch's caches
	// and the caches of rows still prefilling.
	KVBytes int64 `json:"kvBytes"`
}

// BatchStats reports the engine's batch.
func (e *Engine) BatchStats() BatchStats {
	b := &e.batch
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

// noteStep records a decode step of the active rows. (Each row's own
// keys and values, which its Result reports, are counted in decodeStep.)
func (e *Engine) noteStep() {
	b := &e.batch
	n := len(b.active)
	b.mu.Lock()
	b.stats.Steps = b.steps
	b.stats.Active = n
	b.stats.PeakActive = max(b.stats.PeakActive, n)
	b.mu.Unlock()
}

// noteBatch records, after a round of the loop, the keys and values the
// rows hold. Called on the loop goroutine, which owns the caches.
func (e *Engine) noteBatch() {
	b := &e.batch
	kv := nn.CacheBytes(b.caches)
	for _, r := range b.joining {
		kv += nn.CacheBytes(r.caches)
	}
	b.mu.Lock()
	b.stats.KVBytes = kv
	b.stats.Active = len(b.active)
	b.mu.Unlock()
}

// endRow counts a row's end. The last row's end leaves nothing in the
// batch: its caches go in the same round, before anyone could add a row
// to them, so the stats say so now rather than after the round.
func (b *batcher) endRow() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stats.Rows--
	if b.stats.Rows == 0 {
		b.stats.Active, b.stats.KVBytes = 0, 0
	}
}
