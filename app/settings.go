package app

import (
	"context"
	"net/http"
	"time"

	"hark/library/store"
)

func init() { routeSets = append(routeSets, (*Service).settingsRoutes) }

// GetSettings returns the saved settings.
func (s *Service) GetSettings() (store.Settings, error) {
	return s.app.DB.Settings(context.Background())
}

// SaveSettings validates and persists settings, then tells every window.
func (s *Service) SaveSettings(in store.Settings) (store.Settings, error) {
	ctx := context.Background()
	if err := s.app.DB.SaveSettings(ctx, in); err != nil {
		return store.Settings{}, BadRequest(err)
	}
	out, err := s.app.DB.Settings(ctx)
	if err == nil {
		s.app.setBackend(out.Backend)
		s.app.Runner.SetIdle(time.Duration(out.IdleUnloadMinutes) * time.Minute)
		s.app.settingsSaved(out)
		s.app.Events.Publish("settings", out)
	}
	return out, err
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
