package app

import (
	"fmt"
	"slices"

	"hark/engine"
	"hark/models/nn"
)

// KVChoice is one KV cache the Settings and conversation pickers offer.
// Bits is what the setting stores (nn.KVBitsValues, or nn.KVFloat32Bits
// for float32); Default marks engine.DefaultKV's, which a setting of 0
// also means.
type KVChoice struct {
	Bits    int    `json:"bits"`
	Label   string `json:"label"`
	Default bool   `json:"default,omitempty"`
}

// KVChoices lists the KV caches a setting can choose, derived from nn's
// one list plus float32: the default first, then the others from the
// least compressed to the most. The label's "(default)" follows
// engine.DefaultKV, so changing the default changes no text here.
func KVChoices() []KVChoice {
	isDefault := func(b int) bool { return engine.ResolveKV(nn.KVQuant{Bits: b}) == engine.DefaultKV }
	bits := append(slices.Clone(nn.KVBitsValues), nn.KVFloat32Bits)
	slices.SortFunc(bits, func(a, b int) int {
		switch da, db := isDefault(a), isDefault(b); {
		case da && !db:
			return -1
		case db && !da:
			return 1
		}
		return b - a
	})
	out := make([]KVChoice, 0, len(bits))
	for _, b := range bits {
		c := KVChoice{Bits: b, Label: fmt.Sprintf("%d-bit", b)}
		if b == nn.KVFloat32Bits {
			c.Label = fmt.Sprintf("%d-bit float", b)
		}
		if isDefault(b) {
			c.Default = true
			c.Label += " (default)"
		}
		out = append(out, c)
	}
	return out
}
