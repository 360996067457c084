package library

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultWatchBudget is how many folders one root may watch before it is
// kept current by periodic rescans instead. inotify's default allowance
// is 8,192 to 65,536 watches for the whole user, and a root such as /usr
// would take 19,000 of them.
const DefaultWatchBudget = 8192

// rootWatch is the watcher's state for one root.
type rootWatch struct {
	path    string
	watched map[string]bool // folders of this root with a watch
	id      os.FileInfo     // the root folder as armed, to notice a replacement
	missing bool            // the root folder is not there
	removed bool            // ... because it went away while watched
	// overBudget is the budget this root went over (0: within it); such a
	// root holds no watches and is rescanned on the poll tick.
	overBudget int
}

// SetWatchBudget changes the per-root watch budget (0: the default) and
// re-arms every root under it.
func (l *Library) SetWatchBudget(n int) {
	l.mu.Lock()
	l.budget = n
	w := l.w
	l.mu.Unlock()
	if w != nil {
		w.armMu.Lock()
		for _, r := range l.Roots() {
			w.release(r.Path, false)
		}
		w.armMu.Unlock()
		w.rewatch()
		w.l.notify(Change{})
	}
}

func (l *Library) watchBudget() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.budget > 0 {
		return l.budget
	}
	return DefaultWatchBudget
}

// rewatch brings the watches in line with the roots: it releases roots
// no longer configured and arms the ones missing, replaced or new.
func (w *watcher) rewatch() {
	w.armMu.Lock()
	defer w.armMu.Unlock()
	roots := w.l.Roots()
	keep := map[string]bool{}
	for _, r := range roots {
		keep[r.Path] = true
	}
	w.mu.Lock()
	var gone []string
	for p := range w.roots {
		if !keep[p] {
			gone = append(gone, p)
		}
	}
	w.mu.Unlock()
	for _, p := range gone {
		w.release(p, true)
	}
	for _, r := range roots {
		w.arm(r.Path)
	}
}

// arm watches root unless it is already watched as it is on disk. A root
// folder that was replaced (deleted and made again, or another folder
// moved in its place) is armed afresh. Callers hold armMu.
func (w *watcher) arm(root string) {
	w.mu.Lock()
	rw := w.roots[root]
	if rw == nil {
		rw = &rootWatch{path: root, watched: map[string]bool{}}
		w.roots[root] = rw
	}
	w.mu.Unlock()
	st, err := os.Stat(root)
	if err != nil || !st.IsDir() {
		w.mu.Lock()
		wasArmed := !rw.missing && rw.id != nil
		w.mu.Unlock()
		w.releaseWatches(rw)
		w.mu.Lock()
		rw.missing, rw.removed = true, rw.removed || wasArmed
		w.mu.Unlock()
		w.watchParent(root)
		return
	}
	w.mu.Lock()
	healthy := !rw.missing && rw.id != nil && os.SameFile(rw.id, st) && (rw.overBudget > 0 || len(rw.watched) > 0)
	w.mu.Unlock()
	if healthy {
		return
	}
	// A replaced root keeps no watches on folders that are gone.
	w.releaseWatches(rw)
	w.mu.Lock()
	rw.missing, rw.removed, rw.id, rw.overBudget = false, false, st, 0
	w.mu.Unlock()
	w.unwatchParent(root)
	w.addTreeLocked(rw, root, 0)
}

// addTree watches dir (in root) and every folder below it.
func (w *watcher) addTree(root, dir string) {
	w.armMu.Lock()
	defer w.armMu.Unlock()
	w.mu.Lock()
	rw := w.roots[root]
	w.mu.Unlock()
	if rw != nil {
		w.addTreeLocked(rw, dir, 0)
	}
}

// addTreeLocked adds the watch before listing, so a folder created
// meanwhile is either listed or reported.
func (w *watcher) addTreeLocked(rw *rootWatch, dir string, depth int) {
	if depth > maxDirDepth+4 {
		return
	}
	budget := w.l.watchBudget()
	w.mu.Lock()
	stop := w.limitErr != "" || rw.overBudget > 0 || rw.missing || w.roots[rw.path] != rw
	already := rw.watched[dir]
	over := !already && len(rw.watched) >= budget
	w.mu.Unlock()
	if stop {
		return
	}
	if over {
		w.goOverBudget(rw, budget)
		return
	}
	if !already {
		if err := w.addRef(dir); err != nil {
			if isWatchLimit(err) {
				w.hitLimit(err)
			}
			// Unreadable or vanished folders are reported by the scan.
			return
		}
		w.mu.Lock()
		rw.watched[dir] = true
		w.mu.Unlock()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		// IsDir is false for symlinks, so links (loops included) are
		// never followed.
		if e.IsDir() && !(dir == rw.path && skipUnit(e.Name())) {
			w.addTreeLocked(rw, filepath.Join(dir, e.Name()), depth+1)
		}
	}
}

// goOverBudget gives up watching rw: it holds no watches at all (a part
// of a tree watched would be worse than none, as it looks complete) and
// the poll tick rescans it.
func (w *watcher) goOverBudget(rw *rootWatch, budget int) {
	w.releaseWatches(rw)
	w.mu.Lock()
	rw.overBudget = budget
	w.mu.Unlock()
	w.l.opts.Log.Warn("library root has more folders than the watch budget; rescanning it periodically", "root", rw.path, "budget", budget, "every", w.l.opts.PollEvery)
	w.l.notify(Change{})
}

// addRef adds a watch on dir, or shares the one another root holds.
func (w *watcher) addRef(dir string) error {
	w.mu.Lock()
	n := w.refs[dir]
	w.mu.Unlock()
	if n == 0 {
		if err := w.add(w.fsw, dir); err != nil {
			return err
		}
	}
	w.mu.Lock()
	w.refs[dir]++
	w.mu.Unlock()
	return nil
}

// dropRef releases one hold on dir's watch, removing it with the last.
func (w *watcher) dropRef(dir string) {
	w.mu.Lock()
	w.refs[dir]--
	last := w.refs[dir] <= 0
	if last {
		delete(w.refs, dir)
	}
	w.mu.Unlock()
	if last {
		// The kernel drops the watch of a deleted folder itself, so an
		// error here only means it is already gone.
		_ = w.fsw.Remove(dir)
	}
}

// releaseWatches removes every watch rw holds.
func (w *watcher) releaseWatches(rw *rootWatch) {
	w.mu.Lock()
	dirs := make([]string, 0, len(rw.watched))
	for d := range rw.watched {
		dirs = append(dirs, d)
	}
	rw.watched = map[string]bool{}
	w.mu.Unlock()
	for _, d := range dirs {
		w.dropRef(d)
	}
}

// release frees root's watches; drop also forgets the root (it was
// removed from the roots) with its pending events.
func (w *watcher) release(root string, drop bool) {
	w.mu.Lock()
	rw := w.roots[root]
	w.mu.Unlock()
	if rw == nil {
		return
	}
	w.releaseWatches(rw)
	w.unwatchParent(root)
	w.mu.Lock()
	if drop {
		delete(w.roots, root)
		for u, p := range w.pending {
			if p.root == root {
				delete(w.pending, u)
			}
		}
	} else {
		rw.id, rw.overBudget = nil, 0
	}
	w.mu.Unlock()
}

// forget drops the watches of a folder (and those below it) that was
// removed or moved away.
func (w *watcher) forget(root, name string) {
	w.armMu.Lock()
	defer w.armMu.Unlock()
	w.mu.Lock()
	rw := w.roots[root]
	var dirs []string
	if rw != nil {
		for p := range rw.watched {
			if p == name || strings.HasPrefix(p, name+string(filepath.Separator)) {
				dirs = append(dirs, p)
				delete(rw.watched, p)
			}
		}
	}
	w.mu.Unlock()
	for _, d := range dirs {
		w.dropRef(d)
	}
}

// watchParent watches the folder above a missing root, so its return is
// seen at once; the poll tick covers a parent that is missing too.
func (w *watcher) watchParent(root string) {
	parent := filepath.Dir(root)
	w.mu.Lock()
	_, has := w.parents[root]
	w.mu.Unlock()
	if has || parent == root {
		return
	}
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return
	}
	if err := w.addRef(parent); err != nil {
		return
	}
	w.mu.Lock()
	w.parents[root] = parent
	w.mu.Unlock()
}

func (w *watcher) unwatchParent(root string) {
	w.mu.Lock()
	parent, has := w.parents[root]
	delete(w.parents, root)
	w.mu.Unlock()
	if has {
		w.dropRef(parent)
	}
}

// handleRootEvent deals with a root folder itself going away or coming
// back, and reports whether ev was such an event.
func (w *watcher) handleRootEvent(ev fsnotify.Event) bool {
	w.mu.Lock()
	_, isRoot := w.roots[ev.Name]
	w.mu.Unlock()
	if !isRoot {
		return false
	}
	switch {
	case ev.Op.Has(fsnotify.Remove) || ev.Op.Has(fsnotify.Rename):
		w.l.opts.Log.Warn("library root went away; watching for it to return", "root", ev.Name)
	case ev.Op.Has(fsnotify.Create):
		w.l.opts.Log.Info("library root is back; watching it again", "root", ev.Name)
	default:
		return false // e.g. a chmod of the root: nothing to re-arm
	}
	// arm sees the root's current state either way, including a root
	// made again before the parent's watch was in place.
	w.armMu.Lock()
	w.arm(ev.Name)
	w.armMu.Unlock()
	// The index must follow: the models are gone, or back.
	go func() {
		if _, err := w.l.Scan(context.Background()); err != nil {
			w.l.opts.Log.Error("library rescan", "err", err)
		}
	}()
	return true
}

// needsPolling is true when some root is kept current only by rescans.
func (w *watcher) needsPolling() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.limitErr != "" {
		return true
	}
	for _, rw := range w.roots {
		if rw.missing || rw.overBudget > 0 {
			return true
		}
	}
	return false
}

// state fills each root's watch fields and says whether all are watched.
func (w *watcher) state(roots []RootStatus) (bool, string) {
	every := w.l.opts.PollEvery
	if every >= time.Second {
		every = every.Round(time.Second)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.limitErr != "" {
		for i := range roots {
			roots[i].WatchNote = w.limitErr
			if rw := w.roots[roots[i].Path]; rw != nil {
				roots[i].Watches = len(rw.watched)
			}
		}
		return false, fmt.Sprintf("%s; rescanning every %s", w.limitErr, every)
	}
	all := true
	var notes []string
	for i := range roots {
		r := &roots[i]
		rw := w.roots[r.Path]
		switch {
		case rw == nil:
			r.WatchNote = "not armed yet"
		case rw.missing && rw.removed:
			r.WatchNote = fmt.Sprintf("%s was removed; watching for it to return and checking every %s", r.Path, every)
		case rw.missing:
			r.WatchNote = fmt.Sprintf("%s does not exist yet; checking every %s", r.Path, every)
		case rw.overBudget > 0:
			r.WatchNote = fmt.Sprintf("%s has more than %d folders to watch (the watch budget in Settings); rescanning it every %s", r.Path, rw.overBudget, every)
		default:
			r.Watching, r.Watches = true, len(rw.watched)
		}
		if !r.Watching {
			all = false
			notes = append(notes, r.WatchNote)
		}
	}
	return all, strings.Join(notes, "; ")
}
