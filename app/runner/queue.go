package runner

import (
	"context"
	"sync"
)

// fifo is a one-holder lock whose waiters are served in arrival order and
// can give up (context) while waiting. sync.Mutex promises neither.
type fifo struct {
	mu      sync.Mutex
	held    bool
	waiters []chan struct{}
}

// acquire waits for the lock; it fails only when ctx ends first.
func (q *fifo) acquire(ctx context.Context) error {
	q.mu.Lock()
	if !q.held && len(q.waiters) == 0 {
		q.held = true
		q.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	q.waiters = append(q.waiters, ch)
	q.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		for i, w := range q.waiters {
			if w == ch {
				q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
				q.mu.Unlock()
				return ctx.Err()
			}
		}
		q.mu.Unlock()
		// Granted while giving up: pass it on.
		q.release()
		return ctx.Err()
	}
}

// release hands the lock to the longest waiter, or frees it.
func (q *fifo) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiters) > 0 {
		ch := q.waiters[0]
		q.waiters = q.waiters[1:]
		close(ch) // ownership passes; held stays true
		return
	}
	q.held = false
}

// waiting is how many callers wait.
func (q *fifo) waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters)
}
