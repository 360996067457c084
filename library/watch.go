package library

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Status is the library's health as the UI shows it.
type Status struct {
	Roots []RootStatus `json:"roots"`
	// Watching is true only when every root is being watched right now.
	Watching bool `json:"watching"`
	// Reason explains why the library is not (fully) watching and what it
	// does instead; empty when all is well.
	Reason   string    `json:"reason,omitempty"`
	LastScan time.Time `json:"lastScan,omitzero"`
}

// RootStatus is one root's state.
type RootStatus struct {
	Root
	Error string `json:"error,omitempty"`
	// Watching is whether changes in this root are seen as they happen;
	// WatchNote says why not (missing, over the watch budget, ...).
	Watching  bool   `json:"watching"`
	WatchNote string `json:"watchNote,omitempty"`
	Watches   int    `json:"watches"` // folders watched in this root
}

// Status reports roots, watching state and the last full scan.
func (l *Library) Status() Status {
	l.mu.Lock()
	st := Status{LastScan: l.lastScan}
	for _, r := range l.roots {
		st.Roots = append(st.Roots, RootStatus{Root: r, Error: l.rootErrs[r.Path]})
	}
	w := l.w
	l.mu.Unlock()
	if w == nil {
		st.Reason = "not watching for changes"
		return st
	}
	st.Watching, st.Reason = w.state(st.Roots)
	return st
}

// Watch starts watching every root recursively. Events are debounced per
// unit and applied incrementally. It returns once the watches are set; if
// the OS refuses more watches, or a root has more folders than the watch
// budget, it falls back to periodic rescans and says so in Status, never
// failing silently.
func (l *Library) Watch() error {
	return l.watchWith(nil)
}

// watchWith is Watch with a seam for the watch-adding call, so tests can
// make the OS's watch limit happen on demand.
func (l *Library) watchWith(add func(w *fsnotify.Watcher, path string) error) error {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("start file watcher: %w", err)
	}
	if add == nil {
		add = func(w *fsnotify.Watcher, p string) error { return w.Add(p) }
	}
	if max := l.opts.MaxWatches; max > 0 {
		inner, n := add, 0
		add = func(w *fsnotify.Watcher, p string) error {
			if n >= max {
				return fmt.Errorf("%w (HARK_MAX_WATCHES=%d)", errWatchCap, max)
			}
			n++
			return inner(w, p)
		}
	}
	w := &watcher{l: l, fsw: fsw, add: add, pending: map[string]*pendingUnit{}, roots: map[string]*rootWatch{}, refs: map[string]int{}, parents: map[string]string{}, done: make(chan struct{}), stopped: make(chan struct{})}
	l.mu.Lock()
	if l.closed || l.w != nil {
		l.mu.Unlock()
		fsw.Close()
		return errors.New("library is closed or already watching")
	}
	l.w = w
	l.mu.Unlock()
	w.rewatch()
	go w.loop()
	return nil
}

// Close stops the watcher.
func (l *Library) Close() error {
	l.mu.Lock()
	w := l.w
	l.closed = true
	l.w = nil
	l.mu.Unlock()
	if w != nil {
		close(w.done)
		<-w.stopped
		return w.fsw.Close()
	}
	return nil
}

type pendingUnit struct {
	root        string
	first, last time.Time
}

type watcher struct {
	l   *Library
	fsw *fsnotify.Watcher
	add func(*fsnotify.Watcher, string) error

	// armMu serialises adding and removing watches (from the event loop,
	// SetRoots, Scan); it is taken before mu, never while holding it.
	armMu    sync.Mutex
	mu       sync.Mutex
	pending  map[string]*pendingUnit
	roots    map[string]*rootWatch
	refs     map[string]int    // watches per folder (roots may nest)
	parents  map[string]string // missing root -> its parent, watched for its return
	limitErr string            // set once the OS refused a watch: every root polls
	done     chan struct{}
	stopped  chan struct{}
}

// errWatchCap is Options.MaxWatches being reached.
var errWatchCap = errors.New("watch limit reached")

func isWatchLimit(err error) bool {
	if errors.Is(err, errWatchCap) {
		return true
	}
	// Linux: inotify_add_watch fails with ENOSPC at max_user_watches.
	// macOS/BSD kqueue needs a descriptor per watch: EMFILE/ENFILE.
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

func (w *watcher) hitLimit(err error) {
	msg := "the OS refused more file watches (" + err.Error() + ")"
	if errors.Is(err, errWatchCap) {
		msg = err.Error()
	} else if errors.Is(err, syscall.ENOSPC) {
		msg = "inotify watch limit reached"
		if b, rerr := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); rerr == nil {
			msg += fmt.Sprintf(" (fs.inotify.max_user_watches=%s)", strings.TrimSpace(string(b)))
		}
	} else if runtime.GOOS == "darwin" {
		msg = "open file limit reached while watching (" + err.Error() + ")"
	}
	w.mu.Lock()
	first := w.limitErr == ""
	w.limitErr = msg
	w.mu.Unlock()
	if first {
		w.l.opts.Log.Warn("library watcher fell back to periodic rescans", "reason", msg, "every", w.l.opts.PollEvery)
		w.l.notify(Change{})
	}
}

func (w *watcher) loop() {
	defer close(w.stopped)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	poll := time.NewTicker(w.l.opts.PollEvery)
	defer poll.Stop()
	events, errs := w.fsw.Events, w.fsw.Errors
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-events:
			if !ok {
				events, errs = nil, nil
				w.lost()
				continue
			}
			w.handle(ev)
		case err, ok := <-errs:
			if !ok {
				events, errs = nil, nil
				w.lost()
				continue
			}
			w.l.opts.Log.Warn("library watcher", "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: only a full scan is trustworthy.
				go w.l.Scan(context.Background())
			}
		case now := <-tick.C:
			w.flush(now)
		case <-poll.C:
			w.poll()
		}
	}
}

// lost handles the watcher dying under us: keep the index right by
// polling, and say so rather than stop silently.
func (w *watcher) lost() {
	w.mu.Lock()
	w.limitErr = "the file watcher stopped unexpectedly"
	w.mu.Unlock()
	w.l.opts.Log.Error("library watcher stopped; falling back to periodic rescans")
	w.l.notify(Change{})
}

// poll runs on the PollEvery tick: it re-arms roots that went missing or
// were replaced, and rescans everything when some root is not watched.
func (w *watcher) poll() {
	w.rewatch()
	if w.needsPolling() {
		if _, err := w.l.Scan(context.Background()); err != nil {
			w.l.opts.Log.Error("library rescan", "err", err)
		}
	}
}

// handle queues the unit an event touched and watches new folders.
func (w *watcher) handle(ev fsnotify.Event) {
	if w.handleRootEvent(ev) {
		return
	}
	root := w.rootOf(ev.Name)
	if root == "" {
		return
	}
	// A download appends to blobs/<etag>.incomplete for minutes; only its
	// creation and its rename into the final blob matter.
	if ev.Op == fsnotify.Write && strings.HasSuffix(ev.Name, ".incomplete") {
		return
	}
	if u := unitOf(root, ev.Name); ev.Op.Has(fsnotify.Create) && (u == root || !skipUnit(u)) {
		if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() {
			w.addTree(root, ev.Name)
		}
	}
	if ev.Op.Has(fsnotify.Remove) || ev.Op.Has(fsnotify.Rename) {
		w.forget(root, ev.Name)
	}
	unit := unitOf(root, ev.Name)
	if unit != root && skipUnit(unit) {
		return
	}
	now := time.Now()
	w.mu.Lock()
	if p := w.pending[unit]; p != nil {
		p.last = now
	} else {
		w.pending[unit] = &pendingUnit{root: root, first: now, last: now}
	}
	w.mu.Unlock()
}

// rootOf returns the root holding path (the longest match).
func (w *watcher) rootOf(path string) string {
	best := ""
	for _, r := range w.l.Roots() {
		if (path == r.Path || strings.HasPrefix(path, r.Path+string(filepath.Separator))) && len(r.Path) > len(best) {
			best = r.Path
		}
	}
	return best
}

// flush rescans units that are quiet or have waited MaxDelay.
func (w *watcher) flush(now time.Time) {
	type job struct{ root, unit string }
	var due []job
	w.mu.Lock()
	for u, p := range w.pending {
		if now.Sub(p.last) >= w.l.opts.Quiet || now.Sub(p.first) >= w.l.opts.MaxDelay {
			due = append(due, job{p.root, u})
			delete(w.pending, u)
		}
	}
	w.mu.Unlock()
	for _, j := range due {
		if err := w.l.RescanUnit(context.Background(), j.root, j.unit); err != nil {
			w.l.opts.Log.Error("library update", "unit", j.unit, "err", err)
		}
	}
}

// skipUnit is true for top-level entries the scan ignores: huggingface_hub's
// .locks folder, datasets and spaces. Their churn must not cost rescans.
func skipUnit(unit string) bool {
	base := filepath.Base(unit)
	return strings.HasPrefix(base, ".") || strings.HasPrefix(base, "datasets--") || strings.HasPrefix(base, "spaces--")
}
