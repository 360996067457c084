// Package fit says whether each library model fits this machine's memory,
// from the engine's own estimate; the estimates are cached per snapshot by
// whoever owns a Cache (the App, or one CLI listing).
package fit

import (
	"sync"
	"time"

	"hark/app/runner"
	"hark/engine"
	"hark/library"
	"hark/models/profile"
)

// Cache keeps each snapshot's memory estimate, which reading its
// safetensors headers gives; the verdict against what is available now is
// made afresh on every listing. Safe for concurrent use.
type Cache struct {
	mu     sync.Mutex
	est    map[fitKey]int64 // 0: no estimate (an unreadable model)
	budget func() int64     // nil: engine.MemoryBudget
}

type fitKey struct {
	path     string
	modified time.Time
	opt      engine.EstimateOptions
}

// New returns an empty cache.
func New() *Cache { return &Cache{est: map[fitKey]int64{}} }

// SetBudget makes the verdicts compare with what budget says a model may
// take (nil: engine.MemoryBudget, which the runner checks too): for tests
// that give the machine a size.
func (c *Cache) SetBudget(budget func() int64) {
	c.mu.Lock()
	c.budget = budget
	c.mu.Unlock()
}

func (c *Cache) budgetNow() int64 {
	c.mu.Lock()
	f := c.budget
	c.mu.Unlock()
	if f == nil {
		f = engine.MemoryBudget
	}
	return f()
}

// Apply sets each runnable model's fit verdict for this machine, under
// the KV setting and context opt assumes: the figure the runner checks
// before loading it (admission), against the budget it checks.
func (c *Cache) Apply(ms []library.Model, opt engine.EstimateOptions) []library.Model {
	budget := c.budgetNow()
	for i := range ms {
		m := &ms[i]
		if !m.Supported || m.Incomplete || (m.Kind != profile.KindChat && m.Kind != profile.KindSpeech) {
			continue
		}
		need := c.estimate(m, opt)
		if need > 0 {
			m.MemoryNeeded, m.Fit = need, string(engine.Verdict(need, budget))
		}
	}
	return ms
}

func (c *Cache) estimate(m *library.Model, opt engine.EstimateOptions) int64 {
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

// admission is the figure a verdict compares with the budget: what the
// runner counts before it loads m (the estimate, and a chat model's prefix
// cache), so a row that says "fits" is a model the runner will load.
func admission(m *library.Model, e engine.MemoryEstimate) int64 {
	kind := runner.Speech
	if m.Kind == profile.KindChat {
		kind = runner.Chat
	}
	return runner.Admission(kind, e)
}
