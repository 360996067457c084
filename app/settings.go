package app

import (
	"context"
	"net/http"

	"hark/library/store"
)

// The settings' bound methods and routes (with the app-wide info and jobs
// routes); reading, checking and applying them is app/settings.

// GetSettings returns the saved settings.
func (s *Service) GetSettings() (store.Settings, error) {
	return s.app.settings.Get(context.Background())
}

// SaveSettings validates and persists settings, then tells every window.
func (s *Service) SaveSettings(in store.Settings) (store.Settings, error) {
	return s.app.settings.Save(context.Background(), in)
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
