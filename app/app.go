package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"hark/app/chat"
	"hark/app/events"
	"hark/app/fit"
	"hark/app/jobs"
	"hark/app/libsvc"
	"hark/app/runner"
	"hark/app/settings"
	"hark/app/transcription"
	"hark/app/watch"
	"hark/library/store"
)

// Version is set at build time with -ldflags "-X hark/app.Version=...".
var Version = "0.1.0-dev"

// Options configure an App.
type Options struct {
	DataDir string    // defaults to DataDir()
	Stderr  io.Writer // defaults to os.Stderr
	UI      fs.FS     // the built frontend (frontend/dist), may be nil in tests
	// NoLock skips the single-instance lock; CLI commands that only read
	// use it so they work while the app is open.
	NoLock bool
	// Backend is the --backend flag, which wins over HARK_BACKEND and the
	// saved setting (mlx.Select).
	Backend string
	// APIKey is --api-key: required as a Bearer token on /v1 routes (the
	// apiKey setting is used when this is empty).
	APIKey string
	// Headless serves the API without the UI (hark serve --headless).
	Headless bool
	// Desktop says the app runs inside the Wails window (Info.Mode
	// "desktop"); else it serves a browser.
	Desktop bool
}

// App owns everything a running Hark shares: the database, logs, the
// event hub and the job table. Both the desktop shell and hark serve make
// exactly one.
type App struct {
	DataDir string
	DB      *store.DB
	Log     *slog.Logger
	Events  *Events
	Jobs    *Jobs
	UI      fs.FS
	Service *Service
	// Runner owns the loaded models, shared by chat, transcription and
	// the /v1 API.
	Runner *runner.Runner

	dialogs dialogSlot // the desktop window's native dialogs (dialogs.go)

	backendFlag    string // Options.Backend
	backendMu      sync.Mutex
	backend        BackendStatus   // in use, and why
	backendOptions []BackendOption // what Settings may choose

	apiKey   string // Options.APIKey
	headless bool   // Options.Headless
	mode     string // Info.Mode: "desktop" or "browser", from Options.Desktop

	// fits caches each model's memory estimate for the fit verdicts of
	// the library and chat model listings.
	fits *fit.Cache

	// The features' running parts, made by New in wire (wire.go) and
	// nil where a feature did not start (the watcher without the lock).
	lib      *libsvc.Service
	settings *settings.Service
	chats    *chat.Service
	queue    *transcription.Queue
	watch    *watch.Watcher

	lock      *instanceLock
	logCloser io.Closer
	closers   []func() error
}

// New opens the data dir, takes the single-instance lock and opens the
// database. Errors name the file involved and what the user can do.
func New(opts Options) (*App, error) {
	if opts.DataDir == "" {
		opts.DataDir = DataDir()
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if err := ensureDir(opts.DataDir); err != nil {
		return nil, err
	}
	a := &App{DataDir: opts.DataDir, UI: opts.UI, Events: events.New(), backendFlag: opts.Backend, apiKey: opts.APIKey, headless: opts.Headless,
		mode: "browser", fits: fit.New()}
	if opts.Desktop {
		a.mode = "desktop"
	}
	if !opts.NoLock {
		l, err := acquireLock(opts.DataDir)
		if err != nil {
			return nil, err
		}
		a.lock = l
	}
	a.Log, a.logCloser = newLogger(opts.DataDir, opts.Stderr)
	db, err := store.Open(filepath.Join(opts.DataDir, "hark.db"))
	if err != nil {
		a.Log.Error("database", "err", err)
		a.logCloser.Close()
		a.lock.release()
		return nil, err
	}
	a.DB = db
	// A reply cut off by a crash keeps its text, marked as interrupted.
	if n, err := db.MarkInterrupted(context.Background()); err != nil {
		a.Log.Warn("database", "err", err)
	} else if n > 0 {
		a.Log.Warn("replies interrupted by the last exit were kept", "count", n)
	}
	setting, idle := "", 0
	if st, err := db.Settings(context.Background()); err == nil {
		setting, idle = st.Backend, st.IdleUnloadMinutes
	}
	a.setBackend(setting)
	// Closed last (closers run in reverse): chat and transcription give
	// their leases back first.
	a.Runner = runner.New(runner.Options{Log: a.Log, Idle: time.Duration(idle) * time.Minute})
	a.OnClose(func() error { a.Runner.Close(); return nil })
	a.Jobs = jobs.New(a.Events.Publish)
	a.Service = &Service{app: a}
	if err := a.wire(); err != nil {
		a.Close()
		return nil, err
	}
	a.Log.Info("hark started", "version", Version, "data", opts.DataDir, "pid", os.Getpid())
	return a, nil
}

// setBackend selects the backend for models loaded from now on, with the
// saved setting under --backend and HARK_BACKEND, and keeps the outcome
// for Info. It never fails: the reason says what was not possible.
func (a *App) setBackend(setting string) {
	a.backendMu.Lock()
	defer a.backendMu.Unlock()
	sel := selectBackend(a.backendFlag, setting)
	a.backend, a.backendOptions = StatusOf(sel), BackendOptions()
	if a.Log != nil {
		a.Log.Info("compute backend", "name", sel.Name, "asked", sel.Asked, "from", sel.From, "reason", sel.Reason)
	}
}

// OnClose registers cleanup run by Close in reverse order.
func (a *App) OnClose(fn func() error) { a.closers = append(a.closers, fn) }

// Close stops background work and closes the database.
func (a *App) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	if a.DB != nil {
		errs = append(errs, a.DB.Close())
	}
	if a.Log != nil {
		a.Log.Info("hark stopped")
	}
	if a.logCloser != nil {
		a.logCloser.Close()
	}
	a.lock.release()
	return errors.Join(errs...)
}

// Service is the API surface: every exported method is bound to the Wails
// window, and each has an HTTP route registered by its feature file.
// Methods return (value, error) so both transports report errors the same.
type Service struct {
	app *App
}

// Info describes this Hark for the About box and diagnostics.
type Info struct {
	Version string `json:"version"`
	DataDir string `json:"dataDir"`
	DBPath  string `json:"dbPath"`
	Mode    string `json:"mode"`
	// Backend is the compute backend in use and why; Backends lists those
	// this build has, the choices of Settings besides "auto".
	Backend  BackendStatus   `json:"backend"`
	Backends []BackendOption `json:"backends"`
	// KVBitsChoices are the KV caches Settings and a conversation can
	// keep (KVChoices), the default marked.
	KVBitsChoices []KVChoice `json:"kvBitsChoices"`
}

// GetInfo returns version and paths.
func (s *Service) GetInfo() (Info, error) {
	a := s.app
	a.backendMu.Lock()
	defer a.backendMu.Unlock()
	return Info{Version: Version, DataDir: a.DataDir, DBPath: a.DB.Path(), Mode: a.mode,
		Backend: a.backend, Backends: a.backendOptions, KVBitsChoices: KVChoices()}, nil
}

// ListJobs returns running and recent jobs.
func (s *Service) ListJobs() ([]Job, error) { return s.app.Jobs.List(), nil }

// CancelJob stops a running job.
func (s *Service) CancelJob(id string) error {
	if !s.app.Jobs.Cancel(id) {
		return NotFound(fmt.Errorf("no job %q", id))
	}
	return nil
}
