package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"hark/engine"
	"hark/models/nn"
)

// kvOf is what the runner counts per token of a row, and for the one
// conversation the estimate holds.
func kvOf(t *testing.T, dir string) (perToken, base int64) {
	t.Helper()
	e, err := engine.Estimate(dir, engine.EstimateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return e.KVCache / int64(e.Context), e.KVCache
}

func noAvail() int64 { return 0 }

// Rows reserve their keys and values against the budget: those that fit
// start, one that does not waits until a row leaves, the model's status
// counts the rows, and a row too big to fit even alone is refused, naming
// what it needs.
func TestRowsReserveTheBudget(t *testing.T) {
	chat, _ := models(t)
	perToken, base := kvOf(t, chat)
	// Each row's storage grows 256 positions at a time: a row of 300
	// tokens holds 512, the estimate's conversation here.
	const tokens = 300
	bound := func(n int) int64 {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = tokens
		}
		return max(base, nn.BatchCacheBound(perToken, rows))
	}
	if bound(1) != base || bound(2) <= base {
		t.Fatalf("rows of %d tokens: one %d, two %d bytes against the estimate's %d; the test needs one within it and two past it", tokens, bound(1), bound(2), base)
	}
	// Room for two rows, not three.
	limit := admitted(t, Chat, chat) + bound(2) - base
	r := New(Options{Limit: limit, Available: noAvail})
	defer r.Close()
	ctx := context.Background()
	var leases []*Lease
	for i := 0; i < 2; i++ {
		l, err := r.Share(ctx, Chat, chat, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Reserve(ctx, tokens); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		leases = append(leases, l)
	}
	if m := r.Loaded()[0]; m.Rows != 2 || m.Bytes != limit {
		t.Fatalf("two rows: status %+v, want 2 rows holding %d", m, limit)
	}
	third, err := r.Share(ctx, Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Release()
	got := make(chan error, 1)
	go func() { got <- third.Reserve(ctx, tokens) }()
	select {
	case err := <-got:
		t.Fatalf("a third row past the budget started: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	// A row that gives up waiting leaves no trace.
	cctx, cancel := context.WithCancel(ctx)
	quitter, err := r.Share(ctx, Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if err := quitter.Reserve(cctx, tokens); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	quitter.Release()
	leases[0].Release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the third row once one left: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the third row still waits after a row left")
	}
	if m := r.Loaded()[0]; m.Rows != 2 {
		t.Fatalf("status %+v, want 2 rows", m)
	}
	leases[1].Release()
	third.Release()
	if m := r.Loaded()[0]; m.Rows != 0 || m.Bytes != admitted(t, Chat, chat) {
		t.Fatalf("no rows: status %+v, want the admission %d", m, admitted(t, Chat, chat))
	}

	// Alone and still too big: refused at once, clearly.
	l, err := r.Share(ctx, Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	err = l.Reserve(ctx, 100_000)
	if !errors.Is(err, ErrRowTooBig) || !strings.Contains(err.Error(), "100000 tokens") || !strings.Contains(err.Error(), "memory limit") {
		t.Fatalf("a row past the limit alone: %v", err)
	}
}

// The system's available memory guards rows too, less what rows
// reserved but have not allocated yet.
func TestRowsReserveAvailableMemory(t *testing.T) {
	chat, _ := models(t)
	perToken, base := kvOf(t, chat)
	two := nn.BatchCacheBound(perToken, []int{300, 300}) - base
	avail := two + two/2 // room for the second row's growth, not the third's as well
	r := New(Options{Available: func() int64 { return avail }})
	defer r.Close()
	ctx := context.Background()
	// The model loads under the real budget's view: Available only says
	// what rows may add.
	r.opt.Available = func() int64 { return 0 }
	a, err := r.Share(ctx, Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	r.opt.Available = func() int64 { return avail }
	if err := a.Reserve(ctx, 300); err != nil {
		t.Fatal(err)
	}
	b, _ := r.Share(ctx, Chat, chat, nil)
	defer b.Release()
	if err := b.Reserve(ctx, 300); err != nil {
		t.Fatal(err)
	}
	c, _ := r.Share(ctx, Chat, chat, nil)
	defer c.Release()
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := c.Reserve(wctx, 300); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a third row with %d bytes available, two rows reserved: %v", avail, err)
	}
}

// Real batched generations under a budget of two rows: the third waits
// for a row to leave, all three finish with the tokens they get alone,
// and no more than two ever decode together.
func TestRowsQueueRealGenerations(t *testing.T) {
	chat, _ := models(t)
	perToken, base := kvOf(t, chat)
	const maxTokens = 60
	prompts := [][]int{{1, 403}, {1, 250, 12}, {1, 9}}
	rowTokens := len(prompts[1]) + maxTokens
	limitRows := func(n int) int64 {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = rowTokens
		}
		return max(base, nn.BatchCacheBound(perToken, rows))
	}
	r := New(Options{Limit: admitted(t, Chat, chat) + limitRows(2) - base, Available: noAvail})
	defer r.Close()
	ctx := context.Background()
	opt := engine.Options{MaxTokens: maxTokens}
	alone := make([]*engine.Result, len(prompts))
	{
		l, err := r.Share(ctx, Chat, chat, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range prompts {
			if alone[i], err = l.Engine.Generate(ctx, p, opt, nil); err != nil {
				t.Fatal(err)
			}
		}
		l.Release()
	}
	got := make([]*engine.Result, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := r.Share(ctx, Chat, chat, nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Release()
			if err := l.Reserve(ctx, rowTokens); err != nil {
				t.Error(err)
				return
			}
			if got[i], err = l.Engine.GenerateBatched(ctx, p, opt, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i := range got {
		if got[i].Text != alone[i].Text || got[i].Stats.KVCacheBytes <= 0 {
			t.Errorf("row %d: %q (%d KV bytes), alone %q", i, got[i].Text, got[i].Stats.KVCacheBytes, alone[i].Text)
		}
	}
	m := r.Loaded()[0]
	if m.Batch == nil || m.Batch.PeakActive > 2 || m.Rows != 0 {
		t.Fatalf("status %+v, batch %+v: want at most 2 rows together and none left", m, m.Batch)
	}
	t.Logf("peak %d rows together under a two-row budget", m.Batch.PeakActive)
}
