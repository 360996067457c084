package chat

import (
	"context"

	"hark/models/nn"
)

// KV is the KV cache a conversation's replies keep: its own setting, else
// the engine's default (the zero KVQuant: engine.DefaultKV). The
// runner's load check and the chat picker's verdict both use it, so they
// agree.
func (c Sampling) KV() nn.KVQuant {
	var q nn.KVQuant
	if c.KVBits != nil {
		q.Bits = *c.KVBits
	}
	if c.KVGroup != nil {
		q.Group = *c.KVGroup
	}
	return q
}

// FitFor is m's verdict for a conversation that keeps kv (its Fits), or
// its plain verdict when none was computed for kv.
func (m Model) FitFor(kv nn.KVQuant) string {
	for _, f := range m.Fits {
		if f.KVBits == kv.Bits && f.KVGroup == kv.Group {
			return f.Fit
		}
	}
	return m.Fit
}

// withDefaultKV gives a new conversation that does not choose its KV
// cache the one Settings chose for new chats (float32 too, stored as
// nn.KVFloat32Bits); with none chosen it keeps the engine's default.
func (s *Service) withDefaultKV(ctx context.Context, c *Sampling) {
	if c.KVBits != nil {
		return
	}
	if st, err := s.DB.Settings(ctx); err == nil && st.KVBits != 0 {
		bits := st.KVBits
		c.KVBits = &bits
	}
}
