package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"

	"hark/app/apierr"
)

// maxBodyBytes limits JSON request bodies; uploads have their own limit.
const maxBodyBytes = 1 << 20

// router adapts error-returning handlers onto an http.ServeMux.
type router struct {
	mux *http.ServeMux
	log *slog.Logger
}

// handle registers pattern (a ServeMux method pattern) with h; a returned
// error becomes a JSON error response with a status from its kind.
func (r *router) handle(pattern string, h func(http.ResponseWriter, *http.Request) error) {
	r.mux.HandleFunc(pattern, func(w http.ResponseWriter, req *http.Request) {
		if err := h(w, req); err != nil {
			status := statusOf(err)
			if status >= 500 {
				r.log.Error("request failed", "method", req.Method, "path", req.URL.Path, "err", err)
			}
			writeJSON(w, status, map[string]string{"error": err.Error()})
		}
	})
}

// statusError carries an HTTP status with an error.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// BadRequest marks err as the caller's mistake (HTTP 400).
func BadRequest(err error) error { return &statusError{http.StatusBadRequest, err} }

// NotFound marks err as a missing thing (HTTP 404).
func NotFound(err error) error { return &statusError{http.StatusNotFound, err} }

// Conflict marks err as a clash with current state (HTTP 409).
func Conflict(err error) error { return &statusError{http.StatusConflict, err} }

func statusOf(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.status
	}
	if s, ok := apierr.Status(err); ok { // marked by a feature package
		return s
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// reply calls fn and writes its value as JSON.
func reply[T any](w http.ResponseWriter, fn func() (T, error)) error {
	v, err := fn()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// decode reads a size-limited JSON body into v.
func decode(req *http.Request, v any) error {
	body := http.MaxBytesReader(nil, req.Body, maxBodyBytes)
	if err := json.NewDecoder(body).Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &statusError{http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes", maxBodyBytes)}
		}
		if errors.Is(err, io.EOF) {
			return BadRequest(errors.New("empty request body"))
		}
		return BadRequest(fmt.Errorf("bad JSON body: %w", err))
	}
	return nil
}

// recoverPanics answers a panicking request with a 500 and logs the stack;
// the app stays up.
func recoverPanics(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error("panic in request", "method", req.Method, "path", req.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				writeJSON(w, http.StatusInternalServerError, map[string]string{"error": fmt.Sprintf("internal error: %v", v)})
			}
		}()
		next.ServeHTTP(w, req)
	})
}

// Handler is the whole HTTP surface for hark serve: API, events and UI
// behind the loopback Host/Origin guard.
func (a *App) Handler() http.Handler {
	ui, api := guard(a.routes()), a.apiHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if isAPIPath(req.URL.Path) {
			api.ServeHTTP(w, req)
			return
		}
		ui.ServeHTTP(w, req)
	})
}

// DesktopHandler is the same surface for the Wails asset server. Its
// requests arrive over the webview's private scheme (host "wails"), never
// from the network, so the loopback guard does not apply there.
func (a *App) DesktopHandler() http.Handler { return a.routes() }

func (a *App) routes() http.Handler {
	r := &router{mux: http.NewServeMux(), log: a.Log}
	for _, add := range a.Service.routeSets() {
		add(r)
	}
	r.mux.HandleFunc("GET /api/events", a.serveEvents)
	r.handle("/api/", func(w http.ResponseWriter, req *http.Request) error {
		return NotFound(fmt.Errorf("no API route %s %s", req.Method, req.URL.Path))
	})
	if a.headless {
		r.handle("/", func(w http.ResponseWriter, req *http.Request) error {
			return NotFound(errors.New("this Hark runs headless (hark serve --headless): only the API under /v1 is served"))
		})
	} else {
		r.mux.Handle("/", a.uiHandler())
	}
	return recoverPanics(a.Log, r.mux)
}

// serveEvents streams events as server-sent events.
func (a *App) serveEvents(w http.ResponseWriter, req *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch, stop := a.Events.Subscribe()
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, ": connected\n\n")
	fl.Flush()
	for {
		select {
		case <-req.Context().Done():
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			b, err := json.Marshal(ev.Data)
			if err != nil {
				continue
			}
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Topic, b)
			fl.Flush()
		}
	}
}

// idFrom parses the {id} path segment, a positive integer; noun names it
// in the error ("bad transcript id").
func idFrom(req *http.Request, noun string) (int64, error) {
	id, err := strconv.ParseInt(req.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, BadRequest(fmt.Errorf("bad %s id %q", noun, req.PathValue("id")))
	}
	return id, nil
}

// byID adapts a handler taking the {id} path segment (see idFrom).
func byID(noun string, h func(w http.ResponseWriter, req *http.Request, id int64) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, req *http.Request) error {
		id, err := idFrom(req, noun)
		if err != nil {
			return err
		}
		return h(w, req, id)
	}
}
