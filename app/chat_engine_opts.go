package app

import (
	"fmt"

	"hark/engine"
	"hark/models/nn"
)

// draftPromptLookup is the one drafter a conversation can choose: it needs
// no second model. (A draft model is a CLI option for now: `hark chat
// --draft MODEL`.)
const draftPromptLookup = "prompt-lookup"

// validateEngine checks the KV-cache and drafting settings on their own;
// whether the model's heads take the KV setting is checked when it runs,
// and refused then with the values that fit.
func (c ChatSampling) validateEngine() error {
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
	if c.Draft != nil && *c.Draft != "" && *c.Draft != draftPromptLookup {
		return fmt.Errorf("draft %q: the only drafter a conversation can use is %q (or none)", *c.Draft, draftPromptLookup)
	}
	return nil
}

// engineOptions copies the KV-cache and drafting settings into opt.
func (c ChatSampling) engineOptions(opt *engine.Options) {
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
