package watch

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"hark/app/transcription"
	"hark/engine/transcribe"
	"hark/library/store"
)

// Settle is how long a file's size and time must stay unchanged
// before it is queued: a copy in progress keeps growing. Tests shorten it.
var Settle = 2 * time.Second

// Watcher runs one fsnotify watch per folder and queues settled files.
type Watcher struct {
	db      *store.DB
	log     *slog.Logger
	publish func(topic string, data any) // the UI's event hub
	queue   Queue
	settle  time.Duration
	mu      sync.Mutex
	folders map[int64]*watchedFolder
	// pending maps a queue entry to the watched file it transcribes.
	pending map[string]pendingWatch
	closed  bool
}

type pendingWatch struct {
	folder int64
	name   string
	seen   settledFile
}

type watchedFolder struct {
	f      store.WatchFolder
	opt    transcription.Options
	w      *fsnotify.Watcher
	err    string
	done   chan struct{}
	timers map[string]*time.Timer
	last   map[string]settledFile // the previous look at a settling file
	queued map[string]bool        // names in the queue now
}

// Queue is what the Watcher needs of the transcription queue.
type Queue interface {
	Add(src, name string, uploaded bool, opt transcription.Options) transcription.Item
	// InterruptedPath is the entry of path that Hark quit in the middle
	// of, "" when none.
	InterruptedPath(path string) string
	Retry(id string) (transcription.Item, error)
	// OnFinish makes the queue tell fn of each entry that finishes.
	OnFinish(fn func(transcription.Item))
}

// Deps are what the Watcher needs, given by app's wiring.
type Deps struct {
	DB      *store.DB
	Log     *slog.Logger
	Publish func(topic string, data any) // the UI's event hub
	Queue   Queue
}

// Start watches every stored folder, queueing on d.Queue, which
// tells the Watcher of each finished entry. Only the instance that holds
// the data folder's lock watches (the caller checks), so two never queue
// one file twice.
func Start(d Deps) *Watcher {
	w := &Watcher{db: d.DB, log: d.Log, publish: d.Publish, queue: d.Queue, settle: Settle, folders: map[int64]*watchedFolder{}, pending: map[string]pendingWatch{}}
	d.Queue.OnFinish(w.finished)
	fs, err := d.DB.WatchFolders(context.Background())
	if err != nil {
		d.Log.Warn("watch folders", "err", err)
	}
	for _, f := range fs {
		w.Watch(f)
	}
	return w
}

// Baseline records the files already in a new folder as "existing", so
// only files that arrive later are transcribed.
func (w *Watcher) Baseline(ctx context.Context, f store.WatchFolder) error {
	entries, err := os.ReadDir(f.Path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		st, err := e.Info()
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		s := statOf(st)
		if err := w.db.MarkWatchFile(ctx, f.ID, store.WatchFile{Name: e.Name(), Size: s.size, ModTime: s.mtime, State: store.WatchExisting}); err != nil {
			return err
		}
	}
	return nil
}

// Watch watches f and looks at every file in it once: one that arrived
// while Hark was not running is queued like a new one.
func (w *Watcher) Watch(f store.WatchFolder) {
	wf := &watchedFolder{f: f, done: make(chan struct{}), timers: map[string]*time.Timer{}, last: map[string]settledFile{}, queued: map[string]bool{}}
	if err := json.Unmarshal(f.Options, &wf.opt); err != nil {
		wf.err = "its options are unreadable: " + err.Error()
	}
	w.mu.Lock()
	if w.closed || w.folders[f.ID] != nil {
		w.mu.Unlock()
		return
	}
	w.folders[f.ID] = wf
	w.mu.Unlock()
	if wf.err != "" {
		close(wf.done)
		return
	}
	fw, err := fsnotify.NewWatcher()
	if err == nil {
		if err = fw.Add(f.Path); err != nil {
			fw.Close()
		}
	}
	if err != nil {
		w.mu.Lock()
		wf.err = err.Error()
		w.mu.Unlock()
		close(wf.done)
		w.log.Warn("watch folder: not watching", "folder", f.Path, "err", err)
		return
	}
	w.mu.Lock()
	wf.w = fw
	w.mu.Unlock()
	go w.loop(wf)
	entries, _ := os.ReadDir(f.Path)
	for _, e := range entries {
		w.touch(wf, e.Name())
	}
	w.log.Info("watch folder: watching", "folder", f.Path, "formats", f.Formats, "output", f.OutputDir)
}

func (w *Watcher) loop(wf *watchedFolder) {
	defer close(wf.done)
	for {
		select {
		case ev, ok := <-wf.w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write) || ev.Has(fsnotify.Chmod) {
				w.touch(wf, filepath.Base(ev.Name))
			}
		case err, ok := <-wf.w.Errors:
			if !ok {
				return
			}
			w.log.Warn("watch folder", "folder", wf.f.Path, "err", err)
		}
	}
}

// touch (re)starts a file's settle timer: every change pushes it back.
func (w *Watcher) touch(wf *watchedFolder, name string) {
	if ignoredWatchName(name) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.folders[wf.f.ID] != wf {
		return
	}
	if t := wf.timers[name]; t != nil {
		t.Reset(w.settle)
		return
	}
	wf.timers[name] = time.AfterFunc(w.settle, func() { w.look(wf, name) })
}

// ignoredWatchName: hidden files (a copy tool's temporary, .DS_Store) and
// Hark's own outputs when they are written beside the audio.
func ignoredWatchName(name string) bool {
	if strings.HasPrefix(name, ".") {
		return true
	}
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(name)), ".")
	return slices.Contains(transcribe.Formats, ext)
}

// look checks a file whose timer ran out: unchanged since the last look
// means settled; else it waits another settle time.
func (w *Watcher) look(wf *watchedFolder, name string) {
	path := filepath.Join(wf.f.Path, name)
	st, err := os.Stat(path)
	w.mu.Lock()
	if w.closed || w.folders[wf.f.ID] != wf {
		w.mu.Unlock()
		return
	}
	if err != nil || !st.Mode().IsRegular() {
		delete(wf.timers, name) // gone, or a folder: nothing to do
		delete(wf.last, name)
		w.mu.Unlock()
		return
	}
	now := statOf(st)
	if prev, ok := wf.last[name]; !ok || prev != now {
		wf.last[name] = now
		wf.timers[name].Reset(w.settle)
		w.mu.Unlock()
		return
	}
	delete(wf.timers, name)
	delete(wf.last, name)
	if wf.queued[name] {
		w.mu.Unlock()
		return
	}
	wf.queued[name] = true
	w.mu.Unlock()
	if !w.handle(wf, name, path, now) {
		w.mu.Lock()
		delete(wf.queued, name)
		w.mu.Unlock()
	}
}

// handle queues a settled file unless it was handled before; it reports
// whether the file is now in the queue.
func (w *Watcher) handle(wf *watchedFolder, name, path string, now settledFile) bool {
	ctx := context.Background()
	db := w.db
	prev, err := db.WatchFile(ctx, wf.f.ID, name)
	if err == nil && prev.Size == now.size && prev.ModTime.Equal(now.mtime) {
		return false // done before (or there before the folder was watched)
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		w.log.Warn("watch folder", "folder", wf.f.Path, "file", name, "err", err)
		return false
	}
	if bad := transcription.Precheck(path); bad != nil {
		w.log.Info("watch folder: skipped", "folder", wf.f.Path, "file", name, "reason", bad.Error())
		if err := db.MarkWatchFile(ctx, wf.f.ID, store.WatchFile{Name: name, Size: now.size, ModTime: now.mtime, State: "skipped", Detail: transcription.SentenceCase(bad.Error())}); err != nil {
			w.log.Warn("watch folder", "file", name, "err", err)
		}
		return false
	}
	// Registered before the entry exists, so a file that fails at once
	// is still matched to its folder (entries are matched by path).
	w.mu.Lock()
	w.pending[path] = pendingWatch{folder: wf.f.ID, name: name, seen: now}
	w.mu.Unlock()
	q := w.queue
	// A file Hark quit in the middle of is in the queue as interrupted:
	// retrying it resumes from its last saved window.
	if id := q.InterruptedPath(path); id != "" {
		if it, err := q.Retry(id); err == nil {
			w.log.Info("watch folder: retried", "folder", wf.f.Path, "file", name, "id", it.ID)
			return true
		}
	}
	it := q.Add(path, name, false, wf.opt)
	w.log.Info("watch folder: queued", "folder", wf.f.Path, "file", name, "id", it.ID)
	return true
}

// finished writes a watched file's transcript in the folder's formats
// and remembers the outcome. Entries Hark stops before they finish never
// get here: the file is queued again at the next start.
func (w *Watcher) finished(it transcription.Item) {
	w.mu.Lock()
	p, ok := w.pending[it.Path]
	if ok {
		delete(w.pending, it.Path)
	}
	wf := w.folders[p.folder]
	if wf != nil {
		delete(wf.queued, p.name)
	}
	w.mu.Unlock()
	if !ok || wf == nil {
		return // not a watched file, or its folder was removed meanwhile
	}
	ctx := context.Background()
	rec := store.WatchFile{Name: p.name, Size: p.seen.size, ModTime: p.seen.mtime, State: it.State, Detail: it.Error}
	if it.State == "done" {
		dir := wf.f.OutputDir
		if dir == "" {
			dir = wf.f.Path
		}
		paths, err := w.writeOutputs(ctx, it.TranscriptID, dir, wf.f.Formats)
		if err != nil {
			rec.State, rec.Detail = "failed", transcription.SentenceCase(err.Error())
			w.log.Warn("watch folder: write transcript", "file", it.Path, "err", err)
		} else {
			rec.Detail = strings.Join(paths, "\n")
			w.log.Info("watch folder: written", "file", it.Path, "outputs", paths)
		}
	}
	if err := w.db.MarkWatchFile(ctx, p.folder, rec); err != nil {
		w.log.Warn("watch folder", "file", it.Path, "err", err)
	}
	w.publish("watch-folders", map[string]int64{"changed": p.folder})
}

func (w *Watcher) writeOutputs(ctx context.Context, id int64, dir string, formats []string) ([]string, error) {
	t, err := w.db.Transcript(ctx, id)
	if err != nil {
		return nil, err
	}
	return writeWatchOutputs(t, dir, formats)
}

// Status says whether folder id is watched, and why not.
func (w *Watcher) Status(id int64) (bool, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wf := w.folders[id]
	switch {
	case wf == nil:
		return false, "not watched"
	case wf.err != "":
		return false, transcription.SentenceCase(wf.err)
	}
	return wf.w != nil, ""
}

// StopFolder ends one folder's watch; its queued files still finish, but
// their outputs are no longer written.
func (w *Watcher) StopFolder(id int64) {
	w.mu.Lock()
	wf := w.folders[id]
	delete(w.folders, id)
	w.mu.Unlock()
	if wf != nil {
		w.stopWatch(wf)
	}
}

// stop ends wf's watch; wf is out of w.folders already, so timers that
// fire now find nothing to do.
func (w *Watcher) stopWatch(wf *watchedFolder) {
	if wf.w != nil {
		wf.w.Close()
	}
	<-wf.done
	w.mu.Lock()
	for _, t := range wf.timers {
		t.Stop()
	}
	w.mu.Unlock()
}

// Close stops every watch and forgets the pending files.
func (w *Watcher) Close() {
	w.mu.Lock()
	w.closed = true
	fs := w.folders
	w.folders = map[int64]*watchedFolder{}
	w.mu.Unlock()
	for _, wf := range fs {
		w.stopWatch(wf)
	}
}
