package library

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"hark/library/store"
)

// Options configure a Library.
type Options struct {
	DB    *store.DB
	Roots []Root
	Log   *slog.Logger
	// OnChange is called after the index changed (from any goroutine).
	OnChange func(Change)
	// Quiet and MaxDelay debounce watcher events per unit: a unit is
	// rescanned once it has been quiet for Quiet, or MaxDelay after its
	// first pending event at the latest, so a long download is re-read
	// about once a MaxDelay rather than once per write.
	Quiet, MaxDelay time.Duration
	// PollEvery is the periodic rescan interval used when watching is not
	// possible (watch limit reached, root missing).
	PollEvery time.Duration
	// MaxWatches caps the folders watched (0: no cap beyond the OS's).
	// Reaching it behaves exactly like the OS refusing a watch; the app
	// sets it from HARK_MAX_WATCHES, for users who want Hark to leave
	// inotify watches to other programs (and for end-to-end tests).
	MaxWatches int
	// WatchBudget caps the folders watched per root (0: DefaultWatchBudget);
	// a root with more is rescanned every PollEvery instead.
	WatchBudget int
}

// Change tells listeners what moved in the index.
type Change struct {
	Units []string `json:"units,omitempty"` // rescanned units
	Full  bool     `json:"full,omitempty"`  // a full rescan finished
}

// Library is the model index over a set of roots.
type Library struct {
	opts   Options
	ix     index
	scanMu sync.Mutex // one scan writes at a time

	mu       sync.Mutex
	roots    []Root
	rootErrs map[string]string
	lastScan time.Time
	w        *watcher
	budget   int // per-root watch budget; 0: DefaultWatchBudget
	verified map[string]verifyMark
	closed   bool
}

// New returns a library; call Scan to fill the index and Watch to keep it
// current.
func New(opts Options) *Library {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Quiet == 0 {
		opts.Quiet = 200 * time.Millisecond
	}
	if opts.MaxDelay == 0 {
		opts.MaxDelay = time.Second
	}
	if opts.PollEvery == 0 {
		opts.PollEvery = 30 * time.Second
	}
	return &Library{opts: opts, ix: index{opts.DB}, roots: cleanRoots(opts.Roots), rootErrs: map[string]string{}, budget: opts.WatchBudget}
}

func cleanRoots(rs []Root) []Root {
	out := make([]Root, 0, len(rs))
	seen := map[string]bool{}
	for _, r := range rs {
		r.Path = filepath.Clean(r.Path)
		if abs, err := filepath.Abs(r.Path); err == nil {
			r.Path = abs
		}
		if !seen[r.Path] {
			seen[r.Path] = true
			out = append(out, r)
		}
	}
	return out
}

// Roots returns the roots in priority order.
func (l *Library) Roots() []Root {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Root(nil), l.roots...)
}

// SetRoots replaces the roots (after a Settings change), rescans, and
// re-arms the watcher if one runs.
func (l *Library) SetRoots(ctx context.Context, roots []Root) error {
	l.mu.Lock()
	l.roots = cleanRoots(roots)
	w := l.w
	l.mu.Unlock()
	if w != nil {
		w.rewatch()
	}
	_, err := l.Scan(ctx)
	return err
}

// ScanResult summarises a full scan.
type ScanResult struct {
	Models   int           `json:"models"`
	Duration time.Duration `json:"duration"`
}

// Scan rescans every root and rewrites the index to match.
func (l *Library) Scan(ctx context.Context) (ScanResult, error) {
	start := time.Now()
	// A rescan also heals the watcher: a root that vanished or was
	// replaced is armed again.
	l.mu.Lock()
	w := l.w
	l.mu.Unlock()
	if w != nil {
		w.rewatch()
	}
	l.scanMu.Lock()
	defer l.scanMu.Unlock()
	roots := l.Roots()
	var paths []string
	total := 0
	errs := map[string]string{}
	for _, r := range roots {
		paths = append(paths, r.Path)
		us, err := units(r.Path)
		if err != nil {
			errs[r.Path] = rootProblem(r.Path, err)
			us = nil
		}
		models := scanUnits(r.Path, us)
		for _, ms := range models {
			total += len(ms)
		}
		if err := l.ix.replaceUnits(ctx, r.Path, us, models); err != nil {
			return ScanResult{}, fmt.Errorf("index %s: %w", r.Path, err)
		}
	}
	if err := l.ix.dropRootsExcept(ctx, paths); err != nil {
		return ScanResult{}, fmt.Errorf("index: %w", err)
	}
	l.mu.Lock()
	l.rootErrs = errs
	l.lastScan = time.Now()
	l.mu.Unlock()
	l.notify(Change{Full: true})
	return ScanResult{Models: total, Duration: time.Since(start)}, nil
}

func rootProblem(path string, err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("%s does not exist", path)
	}
	return fmt.Sprintf("cannot read %s: %s", path, describeErr(err))
}

// scanUnits scans units in parallel; headers and directory reads are IO
// bound, so a few workers hide latency on cold caches.
func scanUnits(root string, us []string) map[string][]Model {
	out := make(map[string][]Model, len(us))
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	n := min(runtime.GOMAXPROCS(0)*2, 8, max(len(us), 1))
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range work {
				ms, _ := scanUnit(root, u)
				mu.Lock()
				out[u] = ms
				mu.Unlock()
			}
		}()
	}
	for _, u := range us {
		work <- u
	}
	close(work)
	wg.Wait()
	return out
}

// RescanUnit re-reads one unit and updates its rows: the incremental
// update the watcher runs per debounced event batch.
func (l *Library) RescanUnit(ctx context.Context, root, unit string) error {
	l.scanMu.Lock()
	ms, err := scanUnit(root, unit)
	if err == nil {
		err = l.ix.replaceUnits(ctx, "", nil, map[string][]Model{unit: ms})
	}
	l.scanMu.Unlock()
	if err != nil {
		return fmt.Errorf("rescan %s: %w", unit, err)
	}
	l.notify(Change{Units: []string{unit}})
	return nil
}

func (l *Library) notify(c Change) {
	if l.opts.OnChange != nil {
		l.opts.OnChange(c)
	}
}

// List returns every indexed model (without file lists) in root order,
// then by repo, newest snapshot first.
func (l *Library) List(ctx context.Context) ([]Model, error) {
	ms, err := l.ix.list(ctx, "")
	if err != nil {
		return nil, err
	}
	l.withVerify(ms)
	rank := l.rootRank()
	sort.SliceStable(ms, func(i, j int) bool { return rank[ms[i].Root] < rank[ms[j].Root] })
	return ms, nil
}

func (l *Library) rootRank() map[string]int {
	rank := map[string]int{}
	for i, r := range l.Roots() {
		rank[r.Path] = i
	}
	return rank
}

// ErrNotFound is returned by Get and Resolve when no model matches.
var ErrNotFound = errNotFound

// Get resolves id and returns the model with its files.
func (l *Library) Get(ctx context.Context, id string) (Model, error) {
	m, err := l.Resolve(ctx, id)
	if err != nil {
		return Model{}, err
	}
	m, err = l.ix.get(ctx, m.Path)
	if err != nil {
		return Model{}, err
	}
	ms := []Model{m}
	l.withVerify(ms)
	return ms[0], nil
}

// Resolve finds the model an ID names. An ID is a fingerprint
// (hf:org/repo@commit), org/repo[@revision] (a ref name, "main" by
// default, or a commit), an Ollama model (ollama:name:tag), or a path to a
// snapshot or repo folder. When the
// same snapshot sits in several roots, the first root wins.
func (l *Library) Resolve(ctx context.Context, id string) (Model, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return Model{}, fmt.Errorf("%w: empty model id", errNotFound)
	}
	var cands []Model
	var err error
	rev := "main"
	switch {
	case strings.HasPrefix(id, "hf:"):
		fp := id
		if i := strings.LastIndexByte(id, '@'); i > 0 {
			fp = id[:i+1] + strings.ToLower(id[i+1:])
		}
		cands, err = l.ix.list(ctx, `fingerprint = ?`, fp)
		if len(cands) == 0 && err == nil {
			cands, err = l.ix.list(ctx, `lower(fingerprint) = lower(?)`, id)
		}
	case strings.HasPrefix(id, "ollama:"):
		cands, err = l.ix.list(ctx, `id = ? AND source = 'ollama'`, id)
	case filepath.IsAbs(id) || strings.HasPrefix(id, ".") || strings.HasPrefix(id, "~"):
		p := filepath.Clean(expandHome(id, os.Getenv))
		if abs, aerr := filepath.Abs(p); aerr == nil {
			p = abs
		}
		cands, err = l.ix.list(ctx, `path = ?`, p)
		if len(cands) == 0 && err == nil {
			cands, err = l.ix.list(ctx, `unit = ? AND source = 'hf'`, p)
			if len(cands) == 0 {
				cands, err = l.ix.list(ctx, `substr(?1, 1, length(path) + 1) = path || '/'`, p) // a file inside a model
			}
		}
	default:
		repo := id
		if i := strings.LastIndexByte(id, '@'); i > 0 {
			repo, rev = id[:i], id[i+1:]
		}
		all, lerr := l.ix.list(ctx, `lower(repo) = lower(?)`, repo)
		cands, err = pickRevision(all, rev), lerr
		if len(cands) == 0 && len(all) > 0 {
			var ids []string
			for _, m := range all {
				ids = append(ids, m.ID)
			}
			return Model{}, fmt.Errorf("%w: no snapshot of %s matches revision %q; name one of: %s", errNotFound, repo, rev, strings.Join(ids, ", "))
		}
	}
	if err != nil {
		return Model{}, err
	}
	if len(cands) == 0 {
		return Model{}, fmt.Errorf("%w: %q (try hark models for the list)", errNotFound, id)
	}
	rank := l.rootRank()
	sort.SliceStable(cands, func(i, j int) bool { return rank[cands[i].Root] < rank[cands[j].Root] })
	l.withVerify(cands[:1])
	return cands[0], nil
}

// pickRevision keeps the snapshots an org/repo@rev names: those the ref
// rev points at, or whose commit starts with rev (7+ hex). Without any ref
// match a repo with a single snapshot (or a plain dir) still resolves.
func pickRevision(ms []Model, rev string) []Model {
	var out []Model
	for _, m := range ms {
		for _, r := range m.Refs {
			if r == rev {
				out = append(out, m)
			}
		}
	}
	if len(out) == 0 && len(rev) >= 7 && isHex(rev) {
		for _, m := range ms {
			if strings.HasPrefix(m.Commit, strings.ToLower(rev)) {
				out = append(out, m)
			}
		}
	}
	if len(out) == 0 && rev == "main" {
		units := map[string]int{}
		for _, m := range ms {
			units[m.Unit]++
		}
		for _, m := range ms {
			if units[m.Unit] == 1 {
				out = append(out, m)
			}
		}
	}
	return out
}
