package chat

import (
	"fmt"
	"strings"

	"hark/engine"
	"hark/models/nn"
)

// draftPromptLookup drafts by n-gram lookup, needing no second model; any
// other Draft names a draft model in the Library (draftmodel.go).
const draftPromptLookup = "prompt-lookup"

// validateEngine checks the KV-cache and drafting settings on their own;
// whether the model's heads take the KV setting is checked when it runs,
// and refused then with the values that fit.
func (c Sampling) validateEngine() error {
	q := nn.KVQuant{}
	if c.KVBits != nil {
		q.Bits = *c.KVBits
	}
	if c.KVGroup != nil {
		q.Group = *c.KVGroup
	}
	if err := q.Validate(); err != nil {
		return err
	}
	if c.Draft != nil && *c.Draft != strings.TrimSpace(*c.Draft) {
		return fmt.Errorf("draft %q: choose %q or a model of your Library by its ID", *c.Draft, draftPromptLookup)
	}
	return nil
}

// engineOptions copies the KV-cache and drafting settings into opt.
func (c Sampling) engineOptions(opt *engine.Options) {
	if c.KVBits != nil {
		opt.KVBits = *c.KVBits
	}
	if c.KVGroup != nil {
		opt.KVGroup = *c.KVGroup
	}
	if c.Draft != nil && *c.Draft == draftPromptLookup {
		opt.Draft = engine.PromptLookup{}
	}
}
