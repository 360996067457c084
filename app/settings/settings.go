// Package settings is Hark's saved settings: reading them, checking a
// change, and telling the parts that follow them. Those parts are given
// by app's wiring as direct calls, in order, before the UI hears on the
// event bus, which may drop an event for a slow reader.
package settings

import (
	"context"
	"fmt"

	"hark/app/apierr"
	"hark/library"
	"hark/library/store"
	"hark/models/profile"
)

// Resolver finds a model in the Library by ID, org/repo or path.
type Resolver interface {
	Resolve(ctx context.Context, id string) (library.Model, error)
}

// Deps are what the settings need, given by app's wiring.
type Deps struct {
	DB *store.DB
	// Library checks a new default model.
	Library Resolver
	// Apply hear of every saved change, in order (backend, runner idle
	// time, library roots), before Publish tells the windows.
	Apply   []func(store.Settings)
	Publish func(topic string, data any)
}

// Service reads and saves the settings.
type Service struct{ d Deps }

// New makes the settings service.
func New(d Deps) *Service { return &Service{d: d} }

// Get returns the saved settings.
func (s *Service) Get(ctx context.Context) (store.Settings, error) {
	return s.d.DB.Settings(ctx)
}

// Save validates and persists settings, applies them, then tells every
// window. A bad value is the caller's mistake (HTTP 400).
func (s *Service) Save(ctx context.Context, in store.Settings) (store.Settings, error) {
	if err := s.checkDefaultModels(ctx, in); err != nil {
		return store.Settings{}, apierr.BadRequest(err)
	}
	if err := s.d.DB.SaveSettings(ctx, in); err != nil {
		return store.Settings{}, apierr.BadRequest(err)
	}
	out, err := s.d.DB.Settings(ctx)
	if err == nil {
		for _, apply := range s.d.Apply {
			apply(out)
		}
		s.d.Publish("settings", out)
	}
	return out, err
}

// checkDefaultModels refuses a default model that is not in the Library or
// is of the wrong kind. Only a changed value is checked: a default whose
// drive is unplugged must not block saving the other settings.
func (s *Service) checkDefaultModels(ctx context.Context, in store.Settings) error {
	cur, err := s.d.DB.Settings(ctx)
	if err != nil {
		return err
	}
	for _, d := range []struct {
		name, id, was string
		kind          profile.Kind
	}{
		{"default chat model", in.DefaultChatModel, cur.DefaultChatModel, profile.KindChat},
		{"default speech model", in.DefaultSpeechModel, cur.DefaultSpeechModel, profile.KindSpeech},
	} {
		if d.id == "" || d.id == d.was {
			continue
		}
		m, err := s.d.Library.Resolve(ctx, d.id)
		if err != nil {
			return fmt.Errorf("%s %q: %w", d.name, d.id, err)
		}
		if m.Kind != d.kind {
			return fmt.Errorf("%s %q is a %s model, not a %s model", d.name, d.id, m.Kind, d.kind)
		}
	}
	return nil
}
