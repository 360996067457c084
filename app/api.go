package app

import (
	"context"
	"crypto/subtle"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"hark/app/openai"
	"hark/app/runner"
	"hark/library/store"
)

// apiUploads holds audio uploads while they are transcribed.
func apiUploads(a *App) string { return filepath.Join(a.DataDir, "api-uploads") }

// clearAPIUploads removes uploads a crash left behind; only the instance
// holding the lock owns the folder.
func clearAPIUploads(a *App) {
	if a.lock != nil {
		if err := os.RemoveAll(apiUploads(a)); err != nil {
			a.Log.Warn("API uploads", "err", err)
		}
	}
}

// LoadedModels lists the models the runner holds, with their queue.
func (s *Service) LoadedModels() ([]runner.Model, error) {
	out := s.app.Runner.Loaded()
	if out == nil {
		out = []runner.Model{}
	}
	return out, nil
}

func (s *Service) runnerRoutes(r *router) {
	r.handle("GET /api/runner", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.LoadedModels)
	})
}

// apiDeadline bounds one /v1 request, generation included. A variable for
// tests.
var apiDeadline = 30 * time.Minute

func isAPIPath(p string) bool { return p == "/v1" || strings.HasPrefix(p, "/v1/") }

// apiHandler is the OpenAI-compatible API with its own door: a Bearer key
// when one is set (required off loopback), else the loopback Host check;
// the Origin of a browser page must be our own or on the CORS list.
func (a *App) apiHandler() http.Handler {
	uploads := apiUploads(a)
	if err := os.MkdirAll(uploads, 0o700); err != nil {
		a.Log.Warn("API uploads", "err", err)
	}
	h := openai.Handler(openai.Config{
		Library: func() openai.Library {
			if lib := a.library(); lib != nil {
				return lib
			}
			return nil
		},
		Runner: a.Runner,
		MaxUpload: func() int64 {
			// MB as everywhere in Hark: 10^6 bytes (engine.FormatBytes).
			return int64(a.apiSettings().MaxUploadMB) * 1_000_000
		},
		TempDir:  uploads,
		Deadline: apiDeadline,
		Log:      a.Log,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		st := a.apiSettings()
		origin := req.Header.Get("Origin")
		allowed := origin != "" && slices.Contains(st.CORSOrigins, strings.TrimSuffix(origin, "/"))
		if allowed {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Vary", "Origin")
			if req.Method == http.MethodOptions {
				w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
				w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, OpenAI-Organization, OpenAI-Project, X-Stainless-Arch, X-Stainless-Lang, X-Stainless-OS, X-Stainless-Package-Version, X-Stainless-Runtime, X-Stainless-Runtime-Version, X-Stainless-Retry-Count, X-Stainless-Timeout")
				w.Header().Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		refuse := func(status int, code, msg string) {
			openai.WriteError(w, &openai.Error{Status: status, Message: msg, Type: "invalid_request_error", Code: code})
		}
		if st.APIDisabled {
			refuse(http.StatusNotFound, "api_disabled", "the API is turned off in Hark's Settings")
			return
		}
		key := a.apiKey
		if key == "" {
			key = st.APIKey
		}
		if key != "" {
			got, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(key)) != 1 {
				refuse(http.StatusUnauthorized, "invalid_api_key", "a valid API key is required: send it as Authorization: Bearer KEY")
				return
			}
		} else if !loopbackHost(req.Host) {
			// Without a key only this machine may call, by a loopback
			// name (DNS rebinding).
			refuse(http.StatusForbidden, "forbidden_host", "forbidden host "+req.Host+": without an API key Hark only answers on localhost")
			return
		}
		if origin != "" && !allowed && !sameOrigin(origin, req.Host) {
			refuse(http.StatusForbidden, "forbidden_origin", "forbidden origin "+origin+": add it to the CORS origins in Settings to call the API from that page")
			return
		}
		if origin == "" && req.Header.Get("Sec-Fetch-Site") == "cross-site" {
			refuse(http.StatusForbidden, "forbidden_origin", "cross-site request refused")
			return
		}
		h.ServeHTTP(w, req)
	})
}

// apiSettings reads the settings the API door needs; the defaults when the
// database cannot say.
func (a *App) apiSettings() store.Settings {
	st, err := a.DB.Settings(context.Background())
	if err != nil {
		return store.DefaultSettings()
	}
	return st
}
