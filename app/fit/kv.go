package fit

import (
	"hark/engine"
	"hark/library"
	"hark/models/nn"
	"hark/models/profile"
)

// KVFit is a chat model's verdict for one KV setting, at the context the
// chat loads with (the engine's default): from the figure the runner
// checks before loading it (runner.Admission), so the picker and the
// load never disagree.
type KVFit struct {
	KVBits       int    `json:"kvBits"`  // 0: the engine's default (engine.DefaultKV); 32: float32 as stated; 16: f16; 4, 8: quantized
	KVGroup      int    `json:"kvGroup"` // 0: the default group
	Fit          string `json:"fit"`
	MemoryNeeded int64  `json:"memoryNeeded"`
}

// kvSettings are the KV caches a conversation can keep, as it states them
// (a nil group is 0 here, the default), so its verdict is found by its
// own setting and the runner estimates the same nn.KVQuant.
func kvSettings() []nn.KVQuant {
	out := []nn.KVQuant{{}, {Bits: nn.KVFloat32Bits}}
	for _, b := range nn.KVBitsValues {
		q := nn.KVQuant{Bits: b}
		out = append(out, q)
		if !q.Quantized() {
			continue // f16 has no groups
		}
		for _, g := range nn.KVGroupValues {
			out = append(out, nn.KVQuant{Bits: b, Group: g})
		}
	}
	return out
}

// KVFits gives m's verdict for each KV setting a conversation can choose,
// at the context the chat loads with, so the chat picker shows the one
// for the conversation in view.
func (c *Cache) KVFits(m library.Model) []KVFit {
	if !m.Supported || m.Incomplete || m.Kind != profile.KindChat {
		return nil
	}
	var out []KVFit
	for _, q := range kvSettings() {
		f := c.Apply([]library.Model{m}, engine.EstimateOptions{KV: q})[0]
		if f.Fit != "" {
			out = append(out, KVFit{KVBits: q.Bits, KVGroup: q.Group, Fit: f.Fit, MemoryNeeded: f.MemoryNeeded})
		}
	}
	return out
}
