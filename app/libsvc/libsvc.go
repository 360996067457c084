// Package libsvc is the running model library of an App: the index over
// the Hugging Face cache and the user's model folders, its file watcher,
// the first scan, and the following of saved Settings. Its dependencies
// are passed in (the database, a logger, the UI's event publisher), and
// Settings reach it by a direct call, ApplySettings, never through the UI
// event bus, which drops events for a slow reader.
package libsvc

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"

	"hark/library"
	"hark/library/store"
)

// Topic is the event topic of Event.
const Topic = "library"

// Event is published on Topic when the index changes.
type Event struct {
	Type   string         `json:"type"` // "changed"
	Units  []string       `json:"units,omitempty"`
	Full   bool           `json:"full,omitempty"`
	Status library.Status `json:"status"`
}

// Options are the service's dependencies.
type Options struct {
	DB  *store.DB
	Log *slog.Logger
	// Publish tells the UI of a change; it must not block, and may drop.
	Publish func(topic string, data any)
	// Getenv reads HF_HUB_CACHE, HF_HOME and HARK_MAX_WATCHES; os.Getenv
	// when nil.
	Getenv func(string) string
}

// Service holds the library and the goroutines that keep it current.
type Service struct {
	lib    *library.Library
	getenv func(string) string
	log    *slog.Logger
	// latest holds the newest saved settings not yet applied: a burst of
	// saves applies the last one.
	latest   chan store.Settings
	latestMu sync.Mutex
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// Roots are the roots for the given settings: the HF cache from getenv,
// then the user's extra roots.
func Roots(getenv func(string) string, s store.Settings) []library.Root {
	return library.Roots(getenv, s.ModelRoots)
}

// Start opens the index with the saved settings, starts the watcher and
// runs the first scan in the background, so the window opens at once with
// the last known index and updates as the scan lands.
func Start(o Options) (*Service, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Publish == nil {
		o.Publish = func(string, any) {}
	}
	settings, err := o.DB.Settings(context.Background())
	if err != nil {
		return nil, err
	}
	maxWatches := 0
	if v := o.Getenv("HARK_MAX_WATCHES"); v != "" {
		if maxWatches, err = strconv.Atoi(v); err != nil || maxWatches < 0 {
			return nil, fmt.Errorf("HARK_MAX_WATCHES=%q is not a number of watches", v)
		}
	}
	s := &Service{getenv: o.Getenv, log: o.Log, latest: make(chan store.Settings, 1)}
	s.lib = library.New(library.Options{
		DB:          o.DB,
		Roots:       Roots(o.Getenv, settings),
		Log:         o.Log.With("part", "library"),
		MaxWatches:  maxWatches,
		WatchBudget: settings.WatchBudget,
		OnChange: func(c library.Change) {
			o.Publish(Topic, Event{Type: "changed", Units: c.Units, Full: c.Full, Status: s.lib.Status()})
		},
	})
	if err := s.lib.Watch(); err != nil {
		o.Log.Warn("library watcher", "err", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		if _, err := s.lib.Scan(ctx); err != nil && ctx.Err() == nil {
			o.Log.Error("library scan", "err", err)
		}
	}()
	go s.follow(ctx, settings.WatchBudget)
	return s, nil
}

// follow applies saved settings as they come: they move the roots and the
// watch budget.
func (s *Service) follow(ctx context.Context, budget int) {
	defer s.wg.Done()
	for {
		var st store.Settings
		select {
		case <-ctx.Done():
			return
		case st = <-s.latest:
		}
		if st.WatchBudget != budget {
			budget = st.WatchBudget
			s.lib.SetWatchBudget(budget)
		}
		if err := s.lib.SetRoots(ctx, Roots(s.getenv, st)); err != nil && ctx.Err() == nil {
			s.log.Error("library roots", "err", err)
		}
	}
}

// ApplySettings hands saved settings to the library. It does not block; a
// newer save replaces one not yet applied.
func (s *Service) ApplySettings(st store.Settings) {
	s.latestMu.Lock()
	defer s.latestMu.Unlock()
	select {
	case <-s.latest:
	default:
	}
	s.latest <- st
}

// Library is the index.
func (s *Service) Library() *library.Library { return s.lib }

// Close stops the scan, the watcher and the settings follower.
func (s *Service) Close() error {
	s.cancel()
	err := s.lib.Close()
	s.wg.Wait()
	return err
}
