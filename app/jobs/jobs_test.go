package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

type recorder struct {
	mu   sync.Mutex
	seen []Job
}

func (r *recorder) publish(topic string, data any) {
	if topic != Topic {
		panic("topic " + topic)
	}
	r.mu.Lock()
	r.seen = append(r.seen, data.(Job))
	r.mu.Unlock()
}

func (r *recorder) published(id, state string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, j := range r.seen {
		if j.ID == id && j.State == state {
			return true
		}
	}
	return false
}

func waitState(t *testing.T, js *Table, id, state string) Job {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		j, ok := js.Get(id)
		if !ok {
			t.Fatalf("no job %s", id)
		}
		if j.State == state {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s, want %s", id, j.State, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestJobEndsDoneFailedOrCancelled(t *testing.T) {
	var r recorder
	js := New(r.publish)
	ok := js.Start("verify", "ok", "files", func(ctx context.Context, p Progress) (any, error) {
		p(2, 2, "all")
		return 7, nil
	})
	if j := waitState(t, js, ok.ID, "done"); j.Result != 7 || j.Done != 2 || j.Finished.IsZero() {
		t.Fatalf("done job %+v", j)
	}
	bad := js.Start("pull", "bad", "", func(context.Context, Progress) (any, error) { return nil, errors.New("no network") })
	if j := waitState(t, js, bad.ID, "failed"); j.Error != "no network" {
		t.Fatalf("failed job %+v", j)
	}
	long := js.Start("pull", "long", "", func(ctx context.Context, _ Progress) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if !js.Cancel(long.ID) || js.Cancel("job-none") {
		t.Fatal("Cancel reports the wrong existence")
	}
	waitState(t, js, long.ID, "cancelled")
	// Each end is published too, for the UI.
	deadline := time.Now().Add(10 * time.Second)
	for !r.published(ok.ID, "done") || !r.published(bad.ID, "failed") || !r.published(long.ID, "cancelled") {
		if time.Now().After(deadline) {
			t.Fatalf("published %+v", r.seen)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if l := js.List(); len(l) != 3 || l[0].Started.Before(l[2].Started) {
		t.Fatalf("list %+v", l)
	}
}
