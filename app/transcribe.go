package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"hark/engine/audio"
	"hark/library/store"
	"hark/models/whisper"
)

// Transcription: files are queued by path (the desktop's native drop) or
// uploaded (browser mode), a single worker transcribes them one at a time
// (transcribe_queue.go), and finished transcripts live in SQLite. The queue
// publishes every change of an entry on the "transcribe-queue" topic, and
// saved or deleted transcripts on "transcripts".

// TranscribeOptions choose how files are transcribed.
type TranscribeOptions struct {
	// Model is a speech model ID (fingerprint, org/repo or path); empty
	// means Settings' default speech model.
	Model string `json:"model"`
	// Language is a code or English name; "" or "auto" detects it.
	Language string `json:"language"`
	// Task is "transcribe" (default) or "translate" (into English).
	Task string `json:"task"`
	// BeamSize > 1 uses beam search; 0 or 1 decode greedily.
	BeamSize int `json:"beamSize"`
	// NoFallback decodes each window once at temperature 0 instead of
	// retrying doubtful windows at higher temperatures: faster, less robust.
	NoFallback bool `json:"noFallback"`
	// NoVAD decodes the whole recording; by default only the speech
	// Silero VAD finds is decoded (faster-whisper's VadOptions defaults).
	NoVAD bool `json:"noVAD,omitempty"`
	// VADThreshold is the speech probability a frame needs; 0 = 0.5.
	VADThreshold float64 `json:"vadThreshold,omitempty"`
	// WordTimestamps times each word (kept with the transcript: JSON
	// exports list them, SRT/VTT exports can cue them one by one).
	WordTimestamps bool `json:"wordTimestamps,omitempty"`

	// The advanced knobs, OpenAI's names; nil or empty keeps OpenAI's
	// defaults (transcribe_advanced.go).
	Temperatures              []float64 `json:"temperatures,omitempty"`
	NoSpeechThreshold         *float64  `json:"noSpeechThreshold,omitempty"`
	LogprobThreshold          *float64  `json:"logprobThreshold,omitempty"`
	CompressionRatioThreshold *float64  `json:"compressionRatioThreshold,omitempty"`
	InitialPrompt             string    `json:"initialPrompt,omitempty"`
}

// maxBeam bounds beam search: more beams cost time linearly and stop
// helping well before this.
const maxBeam = 16

// normalize checks the options and fills defaults; errors are the caller's.
func (o TranscribeOptions) normalize() (TranscribeOptions, error) {
	o.Model = strings.TrimSpace(o.Model)
	o.Language = strings.TrimSpace(o.Language)
	if strings.EqualFold(o.Language, "auto") {
		o.Language = ""
	}
	if o.Language != "" {
		code, ok := whisper.LookupLanguage(o.Language)
		if !ok {
			return o, fmt.Errorf("unknown language %q (use a code such as en, or auto)", o.Language)
		}
		o.Language = code
	}
	switch o.Task {
	case "":
		o.Task = "transcribe"
	case "transcribe", "translate":
	default:
		return o, fmt.Errorf("task %q: want transcribe or translate", o.Task)
	}
	if o.VADThreshold != 0 && !(o.VADThreshold > 0 && o.VADThreshold < 1) {
		return o, fmt.Errorf("vad threshold %v: want a probability between 0 and 1", o.VADThreshold)
	}
	if o.BeamSize < 0 || o.BeamSize > maxBeam {
		return o, fmt.Errorf("beam size %d: want 0 (greedy) to %d", o.BeamSize, maxBeam)
	}
	return o.normalizeAdvanced()
}

// EnqueueRequest queues files that are already on this computer.
type EnqueueRequest struct {
	Paths   []string          `json:"paths"`
	Options TranscribeOptions `json:"options"`
}

// Language is one language a Whisper model can be told to expect.
type Language struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// TranscriptEvent is published on "transcripts" when one is saved or deleted.
type TranscriptEvent struct {
	ID     int64  `json:"id"`
	Change string `json:"change"` // "saved" or "deleted"
}

// EnqueueTranscriptions queues files by path, one entry per path. A path
// that is not a readable audio file becomes a failed entry with the reason,
// so one bad file in a drop never blocks the others.
func (s *Service) EnqueueTranscriptions(req EnqueueRequest) ([]QueueItem, error) {
	opt, err := req.Options.normalize()
	if err != nil {
		return nil, BadRequest(err)
	}
	if len(req.Paths) == 0 {
		return nil, BadRequest(errors.New("no files given"))
	}
	q := s.app.transcriber()
	out := make([]QueueItem, 0, len(req.Paths))
	for _, p := range req.Paths {
		out = append(out, q.add(p, displayName(p), false, opt))
	}
	return out, nil
}

// TranscriptionQueue returns every entry: queued, running and finished.
func (s *Service) TranscriptionQueue() ([]QueueItem, error) {
	return s.app.transcriber().list(), nil
}

// CancelTranscription drops a queued entry or stops the running one.
func (s *Service) CancelTranscription(id string) error {
	return s.app.transcriber().cancel(id)
}

// RetryTranscription queues an interrupted, failed or cancelled entry again.
func (s *Service) RetryTranscription(id string) (QueueItem, error) {
	return s.app.transcriber().retry(id)
}

// ClearTranscriptionQueue forgets finished entries and returns the rest.
func (s *Service) ClearTranscriptionQueue() ([]QueueItem, error) {
	return s.app.transcriber().clearFinished(), nil
}

// TranscribeLanguages lists the languages Whisper knows, in token order.
// AudioFormats lists the audio formats Hark reads, for the file picker and
// the drop zone.
func (s *Service) AudioFormats() ([]audio.Format, error) { return audio.Formats(), nil }

func (s *Service) TranscribeLanguages() ([]Language, error) {
	out := make([]Language, len(whisper.Languages))
	for i, l := range whisper.Languages {
		out[i] = Language{Code: l.Code, Name: l.Name}
	}
	return out, nil
}

// ListTranscripts returns every transcript, newest first, without segments.
func (s *Service) ListTranscripts() ([]store.Transcript, error) {
	return s.app.DB.Transcripts(context.Background())
}

// GetTranscript returns one transcript with its segments.
func (s *Service) GetTranscript(id int64) (store.Transcript, error) {
	t, err := s.app.DB.Transcript(context.Background(), id)
	return t, transcriptErr(err)
}

// DeleteTranscript removes a transcript, and the copy of its audio when
// Hark keeps one (browser uploads); a user's own file is never touched.
func (s *Service) DeleteTranscript(id int64) error {
	ctx := context.Background()
	t, err := s.app.DB.Transcript(ctx, id)
	if err != nil {
		return transcriptErr(err)
	}
	if err := s.app.DB.DeleteTranscript(ctx, id); err != nil {
		return transcriptErr(err)
	}
	if keptAudio(s.app.DataDir, t.SourcePath) {
		if err := os.Remove(t.SourcePath); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.app.Log.Warn("remove transcript audio", "path", t.SourcePath, "err", err)
		}
	}
	s.app.Events.Publish("transcripts", TranscriptEvent{ID: id, Change: "deleted"})
	return nil
}

func transcriptErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return NotFound(err)
	}
	return err
}

// displayName is what the UI calls a file: its base name.
func displayName(path string) string {
	name := filepath.Base(path)
	if name == "." || name == string(filepath.Separator) {
		return path
	}
	return name
}

// transcribeRoutes mirror the bound methods for hark serve; uploads,
// audio and downloads are HTTP-only (transcribe_files.go).
func (s *Service) transcribeRoutes(r *router) {
	r.handle("GET /api/transcribe/queue", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.TranscriptionQueue)
	})
	r.handle("POST /api/transcribe/queue", func(w http.ResponseWriter, req *http.Request) error {
		var in EnqueueRequest
		if err := decode(req, &in); err != nil {
			return err
		}
		return reply(w, func() ([]QueueItem, error) { return s.EnqueueTranscriptions(in) })
	})
	r.handle("POST /api/transcribe/queue/clear", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.ClearTranscriptionQueue)
	})
	r.handle("DELETE /api/transcribe/queue/{id}", func(w http.ResponseWriter, req *http.Request) error {
		if err := s.CancelTranscription(req.PathValue("id")); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	r.handle("POST /api/transcribe/queue/{id}/retry", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, func() (QueueItem, error) { return s.RetryTranscription(req.PathValue("id")) })
	})
	r.handle("POST /api/transcribe/upload", s.serveUpload)
	r.handle("GET /api/transcribe/formats", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.AudioFormats)
	})
	r.handle("GET /api/transcribe/languages", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.TranscribeLanguages)
	})
	r.handle("GET /api/transcripts", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.ListTranscripts)
	})
	r.handle("GET /api/transcripts/{id}", byID("transcript", func(w http.ResponseWriter, req *http.Request, id int64) error {
		return reply(w, func() (store.Transcript, error) { return s.GetTranscript(id) })
	}))
	r.handle("DELETE /api/transcripts/{id}", byID("transcript", func(w http.ResponseWriter, req *http.Request, id int64) error {
		if err := s.DeleteTranscript(id); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}))
	r.handle("GET /api/transcripts/{id}/audio", byID("transcript", s.serveAudio))
	r.handle("GET /api/transcripts/{id}/export/{format}", byID("transcript", s.serveExport))
	r.handle("POST /api/transcripts/{id}/save/{format}", byID("transcript", func(w http.ResponseWriter, req *http.Request, id int64) error {
		return reply(w, func() (string, error) { return s.SaveTranscriptExport(id, req.PathValue("format")) })
	}))
	r.handle("POST /api/transcripts/{id}/ask", byID("transcript", func(w http.ResponseWriter, req *http.Request, id int64) error {
		return reply(w, func() (store.Conversation, error) { return s.AskAboutTranscript(id) })
	}))
}
