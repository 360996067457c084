package chat

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"hark/app/runner"
	"hark/engine"
	"hark/library"
	"hark/models/tokenizer"
)

// A conversation's Draft is "prompt-lookup" or the library ID of a draft
// model: a smaller chat model with the conversation model's tokenizer,
// which the runner loads in a Draft slot under the same memory budget and
// leases for the length of a reply.

// draftModelFor sets opt.Draft to the conversation's draft model, leased
// from the runner after the target's lease; release gives it back. The
// engine refuses a model with another tokenizer, by name.
func (rt *chatRuntime) draftModelFor(ctx context.Context, s Sampling, target *engine.Engine, opt *engine.Options) (release func(), err error) {
	release = func() {}
	if !usesDraftModel(s) {
		return release, nil
	}
	lib := rt.s.Library
	if lib == nil {
		return release, errors.New("the model library is not running")
	}
	m, err := lib.Resolve(context.Background(), *s.Draft)
	if errors.Is(err, library.ErrNotFound) {
		return release, fmt.Errorf("draft model %s is not in your Library; choose another in Drafting", *s.Draft)
	}
	if err != nil {
		return release, fmt.Errorf("find draft model %s: %w", *s.Draft, err)
	}
	if err := checkChatModel(m); err != nil {
		return release, fmt.Errorf("draft model: %w", err)
	}
	if _, err := os.Stat(filepath.Join(m.Path, "config.json")); err != nil {
		return release, fmt.Errorf("the files of draft model %s were removed from %s; choose another in Drafting", m.ID, m.Path)
	}
	lease, err := rt.s.Runner.Acquire(ctx, runner.Draft, m.Path, nil)
	if err != nil {
		return release, fmt.Errorf("cannot load draft model %s: %w", m.ID, err)
	}
	d, err := engine.NewDraftModel(target, lease.Engine)
	if err != nil {
		lease.Release()
		return release, err
	}
	opt.Draft = d
	return lease.Release, nil
}

// usesDraftModel says s drafts with a second model (not prompt lookup).
func usesDraftModel(s Sampling) bool {
	return s.Draft != nil && *s.Draft != "" && *s.Draft != draftPromptLookup
}

// checkDraftModel refuses, when it is saved, a draft model the Library
// does not have (the tokenizer is checked when it runs, by the engine).
func (s *Service) checkDraftModel(ctx context.Context, c Sampling) error {
	if !usesDraftModel(c) {
		return nil
	}
	lib := s.Library
	if lib == nil {
		return nil // checked again when it runs
	}
	if _, err := lib.Resolve(ctx, *c.Draft); err != nil {
		return fmt.Errorf("draft %q: not %q nor a model in your Library", *c.Draft, draftPromptLookup)
	}
	return nil
}

// vocabKey is the model's vocabulary, token by token, as one string: two
// models may draft for each other exactly when their keys are equal (the
// engine's own check compares the same).
func (s *Service) vocabKey(path string) string {
	if k, ok := s.vocabKeys.Load(path); ok {
		return k.(string)
	}
	key := ""
	if t, err := tokenizer.Load(path); err == nil {
		h := sha256.New()
		for id := range t.VocabSize() {
			tok := t.Token(id)
			h.Write(binary.AppendUvarint(nil, uint64(len(tok))))
			h.Write([]byte(tok))
		}
		key = hex.EncodeToString(h.Sum(nil))
	}
	s.vocabKeys.Store(path, key)
	return key
}

// ListDraftModels lists the chat models that can draft for model: the
// others with the same vocabulary, smallest first.
func (s *Service) ListDraftModels(model string) ([]Model, error) {
	ms, err := s.ListModels()
	if err != nil {
		return nil, err
	}
	var target *Model
	for i := range ms {
		if ms[i].ID == model {
			target = &ms[i]
		}
	}
	out := []Model{}
	if target == nil {
		return out, nil
	}
	want := s.vocabKey(target.Path)
	if want == "" {
		return out, nil
	}
	for _, m := range ms {
		if m.ID != model && m.Path != target.Path && s.vocabKey(m.Path) == want {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b Model) int { return cmp.Compare(a.Params, b.Params) })
	return out, nil
}
