package app

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

// Jobs tracks running and recent jobs.
type Jobs struct {
	events *Events
	mu     sync.Mutex
	next   int
	jobs   map[string]*jobEntry
}

type jobEntry struct {
	job    Job
	cancel context.CancelFunc
	last   time.Time
}

// NewJobs returns a job table publishing to events.
func NewJobs(events *Events) *Jobs { return &Jobs{events: events, jobs: map[string]*jobEntry{}} }

// Start runs fn in the background as a job and returns its snapshot.
func (js *Jobs) Start(kind, title, unit string, fn func(ctx context.Context, progress Progress) (any, error)) Job {
	ctx, cancel := context.WithCancel(context.Background())
	js.mu.Lock()
	js.next++
	e := &jobEntry{job: Job{ID: fmt.Sprintf("job-%d", js.next), Kind: kind, Title: title, State: "running", Unit: unit, Started: time.Now()}, cancel: cancel}
	js.jobs[e.job.ID] = e
	snap := e.job
	js.mu.Unlock()
	js.events.Publish("job", snap)
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
		js.events.Publish("job", snap)
	}()
	return snap
}

// progress updates a job, publishing at most ~20 times a second so a fast
// loop does not flood the UI.
func (js *Jobs) progress(e *jobEntry, done, total int64, msg string) {
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
		js.events.Publish("job", snap)
	}
}

// Cancel stops a running job; it reports whether the job existed.
func (js *Jobs) Cancel(id string) bool {
	js.mu.Lock()
	e, ok := js.jobs[id]
	js.mu.Unlock()
	if ok {
		e.cancel()
	}
	return ok
}

// Get returns a job's snapshot.
func (js *Jobs) Get(id string) (Job, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	e, ok := js.jobs[id]
	if !ok {
		return Job{}, false
	}
	return e.job, true
}

// List returns all jobs, newest first.
func (js *Jobs) List() []Job {
	js.mu.Lock()
	out := make([]Job, 0, len(js.jobs))
	for _, e := range js.jobs {
		out = append(out, e.job)
	}
	js.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out
}
