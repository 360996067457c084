package tokenizer

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countdownCtx is cancelled once Err has been asked after more than n
// times: a deterministic "Stop pressed in the middle".
type countdownCtx struct {
	context.Context
	n, asked atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.asked.Add(1) > c.n.Load() {
		return context.Canceled
	}
	return nil
}

func newCountdown(n int64) *countdownCtx {
	c := &countdownCtx{Context: context.Background()}
	c.n.Store(n)
	return c
}

// Stopping a reply reaches the tokenizer: a long prompt being encoded
// gives up at its next look at the context, not after the whole text.
func TestEncodeContextStopsWhenCancelled(t *testing.T) {
	tk := loadAsset(t, "tokenizers", "qwen3")
	text := strings.Repeat("the quick brown fox jumps over the lazy dog, ", 200) // 2k pieces
	ctx := newCountdown(3)
	ids, err := tk.EncodeContext(ctx, text, false)
	if !errors.Is(err, context.Canceled) || ids != nil {
		t.Fatalf("cancelled encode: %d ids, %v", len(ids), err)
	}
	// The 4th look sees the cancel (one more call reads the error): about
	// 3*cancelEvery pieces done of 2k.
	if asked := ctx.asked.Load(); asked != 5 {
		t.Fatalf("the context was asked %d times; the encode should stop at the 4th look", asked)
	}
	// An expired deadline is a cancellation too.
	dl, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := tk.EncodeContext(dl, text, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("expired deadline: %v", err)
	}
}
