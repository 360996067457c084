package chat

import (
	"time"

	"hark/engine"
)

// LiveStats travel with "delta" events: the reply's speed so far, so the
// UI shows tok/s while the reply streams, not only once it ends.
type LiveStats struct {
	Tokens int     `json:"tokens"`
	TPS    float64 `json:"tps"` // tokens per second after the first
}

// liveMeter counts tokens through Options.OnToken. Both the callback and
// stats run on the generating goroutine (stats from onText), so no lock.
type liveMeter struct {
	tokens  int
	firstAt time.Time
}

func newLiveMeter(opt *engine.Options) *liveMeter {
	m := &liveMeter{}
	opt.OnToken = func(n int) {
		if m.firstAt.IsZero() {
			m.firstAt = time.Now()
		}
		m.tokens = n
	}
	return m
}

func (m *liveMeter) stats() *LiveStats {
	s := &LiveStats{Tokens: m.tokens}
	if el := time.Since(m.firstAt).Seconds(); m.tokens > 1 && el > 0 {
		s.TPS = float64(m.tokens-1) / el
	}
	return s
}
