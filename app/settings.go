package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"hark/library/store"
	"hark/models/profile"
)

// GetSettings returns the saved settings.
func (s *Service) GetSettings() (store.Settings, error) {
	return s.app.DB.Settings(context.Background())
}

// SaveSettings validates and persists settings, then tells every window.
func (s *Service) SaveSettings(in store.Settings) (store.Settings, error) {
	ctx := context.Background()
	if err := s.checkDefaultModels(ctx, in); err != nil {
		return store.Settings{}, BadRequest(err)
	}
	if err := s.app.DB.SaveSettings(ctx, in); err != nil {
		return store.Settings{}, BadRequest(err)
	}
	out, err := s.app.DB.Settings(ctx)
	if err == nil {
		s.app.setBackend(out.Backend)
		s.app.Runner.SetIdle(time.Duration(out.IdleUnloadMinutes) * time.Minute)
		// The library follows by a direct call: the event bus below may
		// drop events for a slow reader.
		s.app.lib.ApplySettings(out)
		s.app.Events.Publish("settings", out)
	}
	return out, err
}

// checkDefaultModels refuses a default model that is not in the Library or
// is of the wrong kind. Only a changed value is checked: a default whose
// drive is unplugged must not block saving the other settings.
func (s *Service) checkDefaultModels(ctx context.Context, in store.Settings) error {
	cur, err := s.app.DB.Settings(ctx)
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
		m, err := s.app.library().Resolve(ctx, d.id)
		if err != nil {
			return fmt.Errorf("%s %q: %w", d.name, d.id, err)
		}
		if m.Kind != d.kind {
			return fmt.Errorf("%s %q is a %s model, not a %s model", d.name, d.id, m.Kind, d.kind)
		}
	}
	return nil
}

func (s *Service) settingsRoutes(r *router) {
	r.handle("GET /api/info", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.GetInfo)
	})
	r.handle("GET /api/settings", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.GetSettings)
	})
	r.handle("PUT /api/settings", func(w http.ResponseWriter, req *http.Request) error {
		var in store.Settings
		if err := decode(req, &in); err != nil {
			return err
		}
		return reply(w, func() (store.Settings, error) { return s.SaveSettings(in) })
	})
	r.handle("GET /api/jobs", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.ListJobs)
	})
	r.handle("DELETE /api/jobs/{id}", func(w http.ResponseWriter, req *http.Request) error {
		if err := s.CancelJob(req.PathValue("id")); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
}
