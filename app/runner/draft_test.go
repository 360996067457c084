package runner

import (
	"context"
	"strings"
	"testing"
)

// A draft model is a slot of its own: the same folder leased as Chat and
// as Draft gives two engines (their caches must not mix) and neither
// lease waits for the other; both count against the same memory limit, so
// a draft that does not fit beside its busy target is refused.
func TestDraftSlot(t *testing.T) {
	chat, _ := models(t)
	ctx := context.Background()
	r := New(Options{})
	defer r.Close()
	c, err := r.Acquire(ctx, Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Acquire(ctx, Draft, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Engine == nil || d.Engine == c.Engine {
		t.Fatalf("draft engine %p, chat engine %p", d.Engine, c.Engine)
	}
	d.Release()
	c.Release()
	if got := kinds(r); len(got) != 2 {
		t.Fatalf("loaded %v", got)
	}

	one := estimate(t, chat)
	r2 := New(Options{Limit: one + one/2})
	defer r2.Close()
	c, err = r2.Acquire(ctx, Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if _, err := r2.Acquire(ctx, Draft, chat, nil); err == nil || !strings.Contains(err.Error(), "memory limit") {
		t.Fatalf("a draft over the limit beside its busy target: %v", err)
	}
}
