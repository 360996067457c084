package openai

import (
	"context"
	"errors"

	"hark/app/runner"
)

// reserveRow reserves, before anything is sent, the memory j's row of the
// batch may grow to (its prompt and max_tokens; without max_tokens, the
// conversation the model's estimate assumes, as a row that may run to a
// 128K context rarely does): it waits while other rows hold the budget, and
// a row that cannot fit even alone is refused with 503. A generation
// served alone (not batchable) uses the model's own cache, which its
// admission counts.
func (s *server) reserveRow(ctx context.Context, j *job) error {
	e := j.lease.Engine
	if !e.Batchable(j.opt) {
		return nil
	}
	err := j.lease.Reserve(ctx, j.lease.RowTokens(len(j.prompt), j.opt.MaxTokens))
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, runner.ErrRowTooBig):
		return &Error{Status: 503, Message: err.Error(), Type: typeServer, Param: "max_tokens", Code: "insufficient_memory"}
	case errors.Is(err, runner.ErrClosed):
		return &Error{Status: 503, Message: err.Error(), Type: typeServer}
	}
	return &Error{Status: 500, Message: err.Error(), Type: typeServer}
}
