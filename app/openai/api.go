// Package openai serves Hark's models over OpenAI's HTTP API (/v1/...), so
// that the official SDKs and the tools built on them (Continue, Open WebUI,
// scripts) talk to Hark as they would to OpenAI: models, chat completions
// (streaming, sampling, stop, logprobs, tools, reasoning), completions,
// and Whisper transcription and translation. Models are leased from the
// App's runner, so API clients and the UI share them and queue fairly.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"hark/app/runner"
	"hark/library"
)

// Library is what the API needs of the model library.
type Library interface {
	List(ctx context.Context) ([]library.Model, error)
	Resolve(ctx context.Context, id string) (library.Model, error)
}

// Config is what the handler depends on.
type Config struct {
	// Library returns the library, nil while it is not running.
	Library func() Library
	Runner  *runner.Runner
	// MaxUpload is the largest audio upload in bytes (read per request,
	// as Settings may change it).
	MaxUpload func() int64
	// TempDir receives uploads while they are transcribed ("" = os temp).
	TempDir string
	// Deadline bounds one request, generation included (0: none).
	Deadline time.Duration
	Log      *slog.Logger
}

// maxJSONBody bounds a JSON request: long conversations fit.
const maxJSONBody = 16 << 20

// Handler serves every /v1/ path; unknown ones get a JSON 404.
func Handler(c Config) http.Handler {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	s := &server{Config: c}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.handle(s.listModels))
	mux.HandleFunc("GET /v1/models/{model...}", s.handle(s.getModel))
	mux.HandleFunc("POST /v1/chat/completions", s.handle(s.chatCompletions))
	mux.HandleFunc("POST /v1/completions", s.handle(s.completions))
	mux.HandleFunc("POST /v1/audio/transcriptions", s.handle(s.transcriptions))
	mux.HandleFunc("POST /v1/audio/translations", s.handle(s.translations))
	mux.HandleFunc("POST /v1/embeddings", s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return &Error{Status: 400, Message: "embeddings are not available: Hark has no embedding models yet", Type: typeInvalid, Code: "unsupported_endpoint"}
	}))
	mux.HandleFunc("/", s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return &Error{Status: 404, Message: fmt.Sprintf("no API route %s %s", r.Method, r.URL.Path), Type: typeInvalid, Code: "unknown_url"}
	}))
	return mux
}

type server struct{ Config }

// Error is an API error, written in OpenAI's shape:
// {"error": {"message", "type", "param", "code"}}.
type Error struct {
	Status  int
	Message string
	Type    string
	Param   string
	Code    string
}

func (e *Error) Error() string { return e.Message }

const (
	typeInvalid = "invalid_request_error"
	typeServer  = "server_error"
)

func badParam(param, format string, args ...any) *Error {
	return &Error{Status: 400, Message: fmt.Sprintf(format, args...), Type: typeInvalid, Param: param, Code: "invalid_value"}
}

// WriteError writes err in OpenAI's JSON shape; errors that are not an
// *Error are server errors (500).
func WriteError(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			e = &Error{Status: 413, Message: fmt.Sprintf("request body over %d bytes", mbe.Limit), Type: typeInvalid, Code: "request_too_large"}
		} else {
			e = &Error{Status: 500, Message: err.Error(), Type: typeServer}
		}
	}
	body := map[string]any{"message": e.Message, "type": e.Type, "param": nil, "code": nil}
	if e.Param != "" {
		body["param"] = e.Param
	}
	if e.Code != "" {
		body["code"] = e.Code
	}
	writeJSON(w, e.Status, map[string]any{"error": body})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// handle adapts an error-returning handler, applies the deadline, and
// turns a panic (a bug in a model graph) into a 500.
func (s *server) handle(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.Deadline > 0 {
			ctx, cancel := context.WithTimeout(r.Context(), s.Deadline)
			defer cancel()
			r = r.WithContext(ctx)
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.Log.Error("panic in API request", "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				WriteError(w, fmt.Errorf("internal error: %v", v))
			}
		}()
		// A stream bounds each write (events.send); the connection may
		// serve another request after this one, unbounded.
		defer http.NewResponseController(w).SetWriteDeadline(time.Time{})
		if err := h(w, r); err != nil {
			if errors.Is(err, errStreamed) {
				return
			}
			if r.Context().Err() != nil && errors.Is(err, r.Context().Err()) {
				if errors.Is(err, context.DeadlineExceeded) {
					WriteError(w, &Error{Status: 504, Message: fmt.Sprintf("the request took longer than the %s limit", s.Deadline), Type: typeServer, Code: "timeout"})
				}
				return // the client went away
			}
			var e *Error
			if !errors.As(err, &e) {
				s.Log.Error("API request failed", "path", r.URL.Path, "err", err)
			}
			WriteError(w, err)
		}
	}
}

// errStreamed: the response has started, nothing more can be written.
var errStreamed = errors.New("response already streamed")

// decodeJSON reads a size-limited JSON body into v.
func decodeJSON(r *http.Request, v any) error {
	body := http.MaxBytesReader(nil, r.Body, maxJSONBody)
	if err := json.NewDecoder(body).Decode(v); err != nil {
		var mbe *http.MaxBytesError
		var ae *Error
		switch {
		case errors.As(err, &ae):
			return ae
		case errors.As(err, &mbe):
			return err
		case errors.Is(err, io.EOF):
			return &Error{Status: 400, Message: "the request body is empty; send a JSON object", Type: typeInvalid}
		}
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return badParam(ute.Field, "%s must be a %s, not a JSON %s", ute.Field, ute.Type, ute.Value)
		}
		return &Error{Status: 400, Message: "the request body is not valid JSON: " + err.Error(), Type: typeInvalid}
	}
	return nil
}
