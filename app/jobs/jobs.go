// Package jobs is the table of long work the UI shows with a progress bar
// (a verify, a pull), each cancellable from either transport.
package jobs

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Job is long work the UI shows with a progress bar: a verify, a pull, a
// transcription. Its snapshot is published on the "job" topic whenever it
// changes, and it can be cancelled from either transport.
type Job struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Title    string    `json:"title"`
	State    string    `json:"state"` // running, done, failed, cancelled
	Done     int64     `json:"done"`
	Total    int64     `json:"total"`
	Unit     string    `json:"unit,omitempty"` // bytes, files, seconds...
	Message  string    `json:"message,omitempty"`
	Error    string    `json:"error,omitempty"`
	Result   any       `json:"result,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
}

// Progress reports a running job's progress.
type Progress func(done, total int64, message string)

// Topic is the event topic of a Job's snapshots.
const Topic = "job"

// Table tracks running and recent jobs.
type Table struct {
	publish func(topic string, data any)
	mu      sync.Mutex
	next    int
	jobs    map[string]*jobEntry
}

type jobEntry struct {
	job    Job
	cancel context.CancelFunc
	last   time.Time
}

// New returns a job table that tells the UI of each change by publish,
// which must not block.
func New(publish func(topic string, data any)) *Table {
	return &Table{publish: publish, jobs: map[string]*jobEntry{}}
}

// Start runs fn in the background as a job and returns its snapshot.
func (js *Table) Start(kind, title, unit string, fn func(ctx context.Context, progress Progress) (any, error)) Job {
	ctx, cancel := context.WithCancel(context.Background())
	js.mu.Lock()
	js.next++
	e := &jobEntry{job: Job{ID: fmt.Sprintf("job-%d", js.next), Kind: kind, Title: title, State: "running", Unit: unit, Started: time.Now()}, cancel: cancel}
	js.jobs[e.job.ID] = e
	snap := e.job
	js.mu.Unlock()
	js.publish(Topic, snap)
	go func() {
		res, err := fn(ctx, func(done, total int64, msg string) { js.progress(e, done, total, msg) })
		js.mu.Lock()
		e.job.Finished = time.Now()
		switch {
		case ctx.Err() != nil:
			e.job.State = "cancelled"
		case err != nil:
			e.job.State, e.job.Error = "failed", err.Error()
		default:
			e.job.State, e.job.Result = "done", res
		}
		snap := e.job
		js.mu.Unlock()
		cancel()
		js.publish(Topic, snap)
	}()
	return snap
}

// progress updates a job, publishing at most ~20 times a second so a fast
// loop does not flood the UI.
func (js *Table) progress(e *jobEntry, done, total int64, msg string) {
	js.mu.Lock()
	e.job.Done, e.job.Total, e.job.Message = done, total, msg
	now := time.Now()
	publish := now.Sub(e.last) >= 50*time.Millisecond || (total > 0 && done >= total)
	if publish {
		e.last = now
	}
	snap := e.job
	js.mu.Unlock()
	if publish {
		js.publish(Topic, snap)
	}
}

// Cancel stops a running job; it reports whether the job existed.
func (js *Table) Cancel(id string) bool {
	js.mu.Lock()
	e, ok := js.jobs[id]
	js.mu.Unlock()
	if ok {
		e.cancel()
	}
	return ok
}

// Get returns a job's snapshot.
func (js *Table) Get(id string) (Job, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	e, ok := js.jobs[id]
	if !ok {
		return Job{}, false
	}
	return e.job, true
}

// List returns all jobs, newest first.
func (js *Table) List() []Job {
	js.mu.Lock()
	out := make([]Job, 0, len(js.jobs))
	for _, e := range js.jobs {
		out = append(out, e.job)
	}
	js.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out
}
