package transcription

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"hark/app/apierr"
	"hark/app/jobs"
	"hark/app/libsvc"
	"hark/app/runner"
	"hark/engine/audio"
	"hark/library/store"
)

// Item is one file in the transcription queue.
type Item struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Path is the file on this computer; empty for uploads, whose temp
	// copy is Hark's business.
	Path     string  `json:"path,omitempty"`
	Uploaded bool    `json:"uploaded"`
	Options  Options `json:"options"`
	// State is queued, running, done, failed or cancelled.
	State string `json:"state"`
	// Phase says what a running entry does: reading (decoding the audio),
	// loading (the model), transcribing or saving.
	Phase string `json:"phase,omitempty"`
	// Done and Total are seconds of audio transcribed and in the file
	// (Total is 0 until the audio is read).
	Done  float64 `json:"done"`
	Total float64 `json:"total"`
	// ETA is the estimated seconds left, or -1 while unknown.
	ETA float64 `json:"eta"`
	// Note says what a running entry does beyond its phase, e.g.
	// "Retrying window 2 at temperature 0.4"; cleared by the next window.
	Note string `json:"note,omitempty"`
	// LoadedModel: this entry loaded the model (false when the queue
	// found it already loaded from the entry before).
	LoadedModel bool `json:"loadedModel,omitempty"`
	// Text is the latest segment, a live preview while transcribing.
	Text         string    `json:"text,omitempty"`
	Error        string    `json:"error,omitempty"`
	TranscriptID int64     `json:"transcriptId,omitempty"`
	JobID        string    `json:"jobId,omitempty"`
	Added        time.Time `json:"added"`

	src string // the file read: Path, or the upload's temp copy
}

// Source is the file the entry reads: Path, or an upload's copy.
func (it Item) Source() string { return it.src }

// Finished is whether the entry has ended, in any way.
func (it *Item) Finished() bool {
	return it.State == "done" || it.State == "failed" || it.State == "cancelled" || it.State == StateInterrupted
}

// Deps are what the queue needs, given by wire.
type Deps struct {
	DB      *store.DB
	Log     *slog.Logger
	Publish func(topic string, data any) // the UI's event hub
	Jobs    *jobs.Table
	Runner  *runner.Runner
	Library *libsvc.Service
	DataDir string
	// Owner is whether this instance holds the data folder's lock: only
	// the owner restores and journals the queue and keeps resume points,
	// so a read-only CLI command beside the app never touches them.
	Owner bool
}

// Queue owns the files to transcribe and its single worker. One file at
// a time: on a CPU two concurrent transcriptions are each slower than one
// after the other, and the loaded model is shared.
type Queue struct {
	Deps
	mu    sync.Mutex
	items []*Item
	next  int
	wake  chan struct{}
	stop  context.CancelFunc
	ctx   context.Context
	done  chan struct{}
	// journaled is what the database last recorded (journal.go).
	journaled string
	// onFinish, when set, gets each entry that finished (watch folders
	// write their exports from it); it runs on its own goroutine.
	onFinish func(Item)
}

// Start puts back the entries the last run left unfinished (as
// interrupted, with their audio), clears uploads nothing refers to, and
// starts the worker.
func Start(d Deps) *Queue {
	var restored []*Item
	// Only the instance holding the lock owns the folder: a read-only CLI
	// command running beside the app must not touch its uploads.
	if d.Owner {
		restored = restoreQueue(&d)
		if err := resetUploads(d.DataDir, keptUploads(restored)); err != nil {
			d.Log.Warn("transcribe uploads", "err", err)
		}
		resetResume(&d, restored)
	}
	ctx, stop := context.WithCancel(context.Background())
	q := &Queue{Deps: d, wake: make(chan struct{}, 1), ctx: ctx, stop: stop, done: make(chan struct{}), items: restored, next: maxQueueID(restored)}
	go q.work()
	return q
}

// Add queues a file. src is read; name is shown. A file that is missing,
// a folder, or not audio at all fails at once with the reason.
func (q *Queue) Add(src, name string, uploaded bool, opt Options) Item {
	bad := Precheck(src)
	q.mu.Lock()
	q.next++
	it := &Item{ID: fmt.Sprintf("t%d", q.next), Name: name, Uploaded: uploaded, Options: opt, State: "queued", ETA: -1, Added: time.Now(), src: src}
	if !uploaded {
		it.Path = src
	}
	q.items = append(q.items, it)
	if bad != nil {
		// Failed before the worker can see it queued.
		q.finishLocked(it, "failed", bad, 0)
	} else {
		q.publishLocked(it)
		q.Log.Info("transcribe: queued", "id", it.ID, "file", src, "uploaded", uploaded)
	}
	snap := *it
	q.mu.Unlock()
	q.poke()
	return snap
}

// Precheck catches what needs no decoding: the file is there, a regular
// file, and starts like a known audio container.
func Precheck(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("the file is not there any more")
	case err != nil:
		return fmt.Errorf("cannot read the file: %w", err)
	case st.IsDir():
		return errors.New("this is a folder; drop the audio files inside it")
	case !st.Mode().IsRegular():
		return errors.New("this is not a regular file")
	case st.Size() == 0:
		return errors.New("the file is empty (0 bytes)")
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read the file: %w", err)
	}
	defer f.Close()
	head := make([]byte, audio.SniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("cannot read the file: %w", err)
	}
	if audio.Sniff(head[:n]) == audio.Unknown {
		return fmt.Errorf("not an audio file Hark can read (expected %s)", audio.FormatNames())
	}
	return nil
}

func (q *Queue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// publishLocked sends an entry's snapshot. Callers hold q.mu, so snapshots of
// one entry go out in the order they were taken (Publish never blocks).
func (q *Queue) publishLocked(it *Item) {
	q.Publish("transcribe-queue", *it)
	q.journalLocked()
}

// update changes a running entry under the lock and publishes it.
func (q *Queue) update(it *Item, fn func(*Item)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	fn(it)
	q.publishLocked(it)
}

// finish records an entry's end and drops its upload copy.
func (q *Queue) finish(it *Item, state string, err error, transcript int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.finishLocked(it, state, err, transcript)
}

// finishLocked is finish with q.mu held, so a state change and the check
// that allowed it happen at once.
func (q *Queue) finishLocked(it *Item, state string, err error, transcript int64) {
	it.State, it.Phase, it.ETA, it.TranscriptID = state, "", -1, transcript
	if state == "done" {
		it.ETA = 0
	}
	if err != nil {
		it.Error = SentenceCase(err.Error())
	}
	q.publishLocked(it)
	if it.Uploaded && state != "done" {
		removeUpload(q.Log, it.src)
	}
	q.Log.Info("transcribe: "+state, "id", it.ID, "file", it.Name, "err", err)
	if q.onFinish != nil {
		go q.onFinish(*it)
	}
}

// List returns every entry: queued, running and finished.
func (q *Queue) List() []Item {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Item, len(q.items))
	for i, it := range q.items {
		out[i] = *it
	}
	return out
}

// ClearFinished forgets finished entries and returns the rest.
func (q *Queue) ClearFinished() []Item {
	q.mu.Lock()
	keep := q.items[:0]
	for _, it := range q.items {
		if !it.Finished() {
			keep = append(keep, it)
		} else if it.State == StateInterrupted && it.Uploaded {
			removeUpload(q.Log, it.src) // the user let it go
		}
	}
	clear(q.items[len(keep):])
	q.items = keep
	q.journalLocked()
	q.mu.Unlock()
	return q.List()
}

func (q *Queue) find(id string) *Item {
	for _, it := range q.items {
		if it.ID == id {
			return it
		}
	}
	return nil
}

// Cancel drops a queued entry or stops the running one.
func (q *Queue) Cancel(id string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	it := q.find(id)
	if it == nil {
		return apierr.NotFound(fmt.Errorf("no queued transcription %q", id))
	}
	switch it.State {
	case "queued":
		// Under the lock: the worker cannot take it in between.
		q.finishLocked(it, "cancelled", nil, 0)
	case "running":
		q.Jobs.Cancel(it.JobID)
	default:
		return apierr.Conflict(fmt.Errorf("%s has already finished (%s)", it.Name, it.State))
	}
	return nil
}

// work runs queued entries one at a time until shutdown. The App's runner
// keeps the model loaded between files, and frees it once idle.
func (q *Queue) work() {
	defer close(q.done)
	for {
		it := q.take()
		if it == nil {
			select {
			case <-q.wake:
				continue
			case <-q.ctx.Done():
				return
			}
		}
		q.runJob(it)
		if q.ctx.Err() != nil {
			return
		}
	}
}

// take returns the oldest queued entry, or nil.
func (q *Queue) take() *Item {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ctx.Err() != nil {
		return nil
	}
	for _, it := range q.items {
		if it.State == "queued" {
			return it
		}
	}
	return nil
}

// runJob runs one entry as a job, so it shows (and can be cancelled) in
// the activity panel too, and waits for it.
func (q *Queue) runJob(it *Item) {
	finished := make(chan struct{})
	q.mu.Lock()
	// Started under the lock so a cancel never sees "running" without a job.
	job := q.Jobs.Start("transcribe", "Transcribe "+it.Name, "seconds", func(ctx context.Context, progress jobs.Progress) (any, error) {
		defer close(finished)
		id, err := q.process(ctx, it, progress)
		switch {
		case ctx.Err() != nil && q.ctx.Err() != nil:
			// Hark is quitting: the entry stays unfinished in the database
			// and comes back as interrupted, audio and all.
		case ctx.Err() != nil:
			q.finish(it, "cancelled", nil, 0)
		case err != nil:
			q.finish(it, "failed", err, 0)
		default:
			q.finish(it, "done", nil, id)
		}
		if err != nil {
			return nil, err
		}
		return map[string]int64{"transcriptId": id}, nil
	})
	it.JobID, it.State, it.Phase = job.ID, "running", "reading"
	q.publishLocked(it)
	q.mu.Unlock()
	select {
	case <-finished:
	case <-q.ctx.Done():
		q.Jobs.Cancel(job.ID)
		<-finished
	}
}

// Shutdown stops the worker, cancelling the running entry. Unfinished
// entries and their uploads stay for the next start (in the database).
func (q *Queue) Shutdown() {
	q.stop()
	<-q.done
}

// SentenceCase capitalizes an error message for the UI.
func SentenceCase(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// OnFinish makes fn hear of each entry that finishes, on a goroutine of
// its own (watch folders write their exports from it).
func (q *Queue) OnFinish(fn func(Item)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.onFinish = fn
}

// InterruptedPath returns the ID of the interrupted entry for path, or ""
// (watch folders retry it rather than queue the file twice).
func (q *Queue) InterruptedPath(path string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, it := range q.items {
		if it.Path == path && it.State == StateInterrupted {
			return it.ID
		}
	}
	return ""
}
