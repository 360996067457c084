package app

import (
	"sync"
	"time"

	"hark/engine"
	"hark/library"
	"hark/models/profile"
)

// fitCache keeps each snapshot's memory estimate, which reading its
// safetensors headers gives; the verdict against what is available now is
// made afresh on every listing.
type fitCache struct {
	mu  sync.Mutex
	est map[fitKey]int64 // 0: no estimate (an unreadable model)
}

type fitKey struct {
	path     string
	modified time.Time
	opt      engine.EstimateOptions
}

var fits = fitCache{est: map[fitKey]int64{}}

// WithFit sets each runnable model's fit verdict for this machine, under
// the KV setting and context opt assumes: the engine's own estimate,
// against the budget Load checks.
func WithFit(ms []library.Model, opt engine.EstimateOptions) []library.Model {
	budget := memoryBudget()
	for i := range ms {
		m := &ms[i]
		if !m.Supported || m.Incomplete || (m.Kind != profile.KindChat && m.Kind != profile.KindSpeech) {
			continue
		}
		need := fits.estimate(m, opt)
		if need > 0 {
			m.MemoryNeeded, m.Fit = need, string(engine.Verdict(need, budget))
		}
	}
	return ms
}

func (c *fitCache) estimate(m *library.Model, opt engine.EstimateOptions) int64 {
	k := fitKey{m.Path, m.Modified, opt}
	c.mu.Lock()
	need, ok := c.est[k]
	c.mu.Unlock()
	if ok {
		return need
	}
	if e, err := engine.Estimate(m.Path, opt); err == nil {
		need = admission(m, e)
	}
	c.mu.Lock()
	c.est[k] = need
	c.mu.Unlock()
	return need
}
