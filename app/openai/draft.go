package openai

import (
	"context"
	"errors"
	"fmt"

	"hark/app/runner"
	"hark/engine"
	"hark/models/profile"
)

// draftPromptLookup is the draft_model value for n-gram drafting.
const draftPromptLookup = "prompt-lookup"

// draftFields are Hark's extension of /v1/chat/completions for speculative
// decoding: draft_model names a smaller Library model with the model's
// tokenizer (or "prompt-lookup", which needs none), draft_tokens the
// drafts per round (default 4 for a model, 8 for prompt lookup). At
// temperature 0 the reply is the one plain decoding writes.
type draftFields struct {
	DraftModel  string `json:"draft_model"`
	DraftTokens *int   `json:"draft_tokens"`
}

// drafter sets opt's drafter from f. A draft model is leased from the
// runner (a Draft slot, under the same memory budget) after the target's
// lease; release gives it back.
func (s *server) drafter(ctx context.Context, f draftFields, target *engine.Engine, opt *engine.Options) (release func(), err error) {
	release = func() {}
	if f.DraftTokens != nil {
		if *f.DraftTokens < 1 || *f.DraftTokens > engine.MaxDraftTokens {
			return release, badParam("draft_tokens", "draft_tokens must be between 1 and %d", engine.MaxDraftTokens)
		}
		if f.DraftModel == "" {
			return release, badParam("draft_tokens", "draft_tokens needs draft_model")
		}
		opt.DraftTokens = *f.DraftTokens
	}
	switch f.DraftModel {
	case "":
		return release, nil
	case draftPromptLookup:
		opt.Draft = engine.PromptLookup{}
		return release, nil
	}
	m, err := s.resolve(ctx, f.DraftModel, profile.KindChat)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Param = "draft_model"
		}
		return release, err
	}
	lease, err := s.Runner.Acquire(ctx, runner.Draft, m.Path, nil)
	if err != nil {
		if ctx.Err() != nil {
			return release, ctx.Err()
		}
		return release, &Error{Status: 503, Message: fmt.Sprintf("cannot load draft model %s: %v", f.DraftModel, err), Type: typeServer, Param: "draft_model", Code: "model_load_failed"}
	}
	d, err := engine.NewDraftModel(target, lease.Engine)
	if err != nil {
		lease.Release()
		return release, badParam("draft_model", "%v", err)
	}
	opt.Draft = d
	return lease.Release, nil
}
