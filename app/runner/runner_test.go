package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"hark/engine"
	"hark/mlx/mlxtest"
)

func models(t *testing.T) (chat, speech string) {
	return mlxtest.Assets(t, "models", "stories260K", "hf"), mlxtest.Assets(t, "whisper", "golden", "model")
}

func estimate(t *testing.T, dir string) int64 {
	t.Helper()
	e, err := engine.Estimate(dir, engine.EstimateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Total <= 0 {
		t.Fatalf("estimate of %s is %d", dir, e.Total)
	}
	return e.Total
}

// admitted is what the runner counts for a model: its estimate and its
// share of prefix cache.
func admitted(t *testing.T, kind Kind, dir string) int64 {
	t.Helper()
	e, err := engine.Estimate(dir, engine.EstimateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return e.Total + max(prefixBytes(kind, e), 0)
}

func kinds(r *Runner) []string {
	var out []string
	for _, m := range r.Loaded() {
		out = append(out, string(m.Kind))
	}
	return out
}

// A model stays loaded between uses, and a second kind joins it when both
// fit the budget.
func TestLoadOnceAndShare(t *testing.T) {
	chat, speech := models(t)
	r := New(Options{})
	defer r.Close()
	l, err := r.Acquire(context.Background(), Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Loaded || l.Engine == nil {
		t.Fatalf("first lease: loaded %v, engine %v", l.Loaded, l.Engine)
	}
	first := l.Engine
	l.Release()
	l.Release() // twice is harmless
	l, err = r.Acquire(context.Background(), Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.Loaded || l.Engine != first {
		t.Fatalf("second lease reloaded the model")
	}
	l.Release()
	s, err := r.Acquire(context.Background(), Speech, speech, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Speech == nil {
		t.Fatal("speech lease has no model")
	}
	s.Release()
	if got := kinds(r); len(got) != 2 || got[0] != "speech" {
		t.Fatalf("loaded %v, want speech then chat", got)
	}
}

// With a limit that holds one model, loading the other unloads the least
// recently used idle one; a model in use is never unloaded, and the load
// is refused with the figures instead.
func TestEvictLRUAndRefuse(t *testing.T) {
	chat, speech := models(t)
	limit := max(admitted(t, Chat, chat), estimate(t, speech)) + 1
	r := New(Options{Limit: limit})
	defer r.Close()
	ctx := context.Background()
	c, err := r.Acquire(ctx, Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The chat model is in use: the speech model cannot make room.
	_, err = r.Acquire(ctx, Speech, speech, nil)
	if err == nil || !strings.Contains(err.Error(), "memory limit") || !strings.Contains(err.Error(), speech) {
		t.Fatalf("load over the limit with the other model busy: %v", err)
	}
	if got := kinds(r); len(got) != 1 || got[0] != "chat" {
		t.Fatalf("after the refusal: loaded %v", got)
	}
	c.Release()
	s, err := r.Acquire(ctx, Speech, speech, nil)
	if err != nil {
		t.Fatalf("the idle chat model should have made room: %v", err)
	}
	s.Release()
	if got := kinds(r); len(got) != 1 || got[0] != "speech" {
		t.Fatalf("after eviction: loaded %v, want only speech", got)
	}
}

// The system's available memory is checked too.
func TestRefuseOverAvailable(t *testing.T) {
	chat, _ := models(t)
	r := New(Options{Available: func() int64 { return 1 << 10 }})
	defer r.Close()
	_, err := r.Acquire(context.Background(), Chat, chat, nil)
	if err == nil || !strings.Contains(err.Error(), "only 0.0 MB is available") {
		t.Fatalf("got %v", err)
	}
	if len(r.Loaded()) != 0 {
		t.Fatal("a refused model stayed in the table")
	}
}

func TestIdleUnload(t *testing.T) {
	chat, _ := models(t)
	r := New(Options{Idle: time.Hour})
	defer r.Close()
	l, err := r.Acquire(context.Background(), Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.unloadIdle(time.Now().Add(2 * time.Hour))
	if len(r.Loaded()) != 1 {
		t.Fatal("a model in use was unloaded as idle")
	}
	l.Release()
	r.unloadIdle(time.Now().Add(30 * time.Minute))
	if len(r.Loaded()) != 1 {
		t.Fatal("unloaded before the idle time")
	}
	r.unloadIdle(time.Now().Add(2 * time.Hour))
	if len(r.Loaded()) != 0 {
		t.Fatal("an idle model stayed loaded")
	}
	// The sweeper does it by itself with a short idle time.
	r.SetIdle(40 * time.Millisecond)
	l, err = r.Acquire(context.Background(), Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	deadline := time.Now().Add(5 * time.Second)
	for len(r.Loaded()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the sweeper did not unload the idle model")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Waiters are served in arrival order; one that gives up leaves the line
// without taking a turn.
func TestQueueIsFairAndCancellable(t *testing.T) {
	chat, _ := models(t)
	r := New(Options{})
	defer r.Close()
	ctx := context.Background()
	first, err := r.Acquire(ctx, Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	gaveUp, cancel := context.WithCancel(ctx)
	quitter := make(chan error, 1)
	for i := 0; i < 4; i++ {
		if i == 2 {
			go func() {
				_, err := r.Acquire(gaveUp, Chat, chat, nil)
				quitter <- err
			}()
		} else {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				l, err := r.Acquire(ctx, Chat, chat, nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				l.Release()
			}(i)
		}
		waitWaiting(t, r, i+1)
	}
	cancel()
	if err := <-quitter; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled waiter got %v", err)
	}
	waitWaiting(t, r, 3)
	first.Release()
	wg.Wait()
	if len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 3 {
		t.Fatalf("served in order %v, want [0 1 3]", order)
	}
}

func waitWaiting(t *testing.T, r *Runner, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ms := r.Loaded()
		if len(ms) == 1 && ms[0].Waiting == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting %+v, want %d", ms, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestClosedRefuses(t *testing.T) {
	chat, _ := models(t)
	r := New(Options{})
	l, err := r.Acquire(context.Background(), Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := r.Acquire(context.Background(), Chat, chat, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	if len(r.Loaded()) != 1 {
		t.Fatal("a model in use was freed by Close")
	}
	l.Release()
	if len(r.Loaded()) != 0 {
		t.Fatal("the model was not freed when its lease ended after Close")
	}
}
