package app

import (
	"context"
	"errors"
	"net/http"
	"os"

	"hark/app/transcription"
	"hark/engine/audio"
	"hark/library/store"
	"hark/models/whisper"
)

// Transcription: files are queued by path (the desktop's native drop) or
// uploaded (browser mode), a single worker transcribes them one at a time
// (app/transcription), and finished transcripts live in SQLite. The queue
// publishes every change of an entry on the "transcribe-queue" topic, and
// saved or deleted transcripts on "transcripts".

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

// EnqueueTranscriptions queues files by path, one entry per path. A path
// that is not a readable audio file becomes a failed entry with the reason,
// so one bad file in a drop never blocks the others.
func (s *Service) EnqueueTranscriptions(req EnqueueRequest) ([]QueueItem, error) {
	opt, err := req.Options.Normalize()
	if err != nil {
		return nil, BadRequest(err)
	}
	if len(req.Paths) == 0 {
		return nil, BadRequest(errors.New("no files given"))
	}
	q := s.app.transcriber()
	out := make([]QueueItem, 0, len(req.Paths))
	for _, p := range req.Paths {
		out = append(out, q.Add(p, transcription.DisplayName(p), false, opt))
	}
	return out, nil
}

// TranscriptionQueue returns every entry: queued, running and finished.
func (s *Service) TranscriptionQueue() ([]QueueItem, error) {
	return s.app.transcriber().List(), nil
}

// CancelTranscription drops a queued entry or stops the running one.
func (s *Service) CancelTranscription(id string) error {
	return s.app.transcriber().Cancel(id)
}

// RetryTranscription queues an interrupted, failed or cancelled entry again.
func (s *Service) RetryTranscription(id string) (QueueItem, error) {
	return s.app.transcriber().Retry(id)
}

// ClearTranscriptionQueue forgets finished entries and returns the rest.
func (s *Service) ClearTranscriptionQueue() ([]QueueItem, error) {
	return s.app.transcriber().ClearFinished(), nil
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
	if transcription.KeptAudio(s.app.DataDir, t.SourcePath) {
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

// transcribeRoutes mirror the bound methods for hark serve; uploads,
// audio and downloads are HTTP-only (transcribe_http.go).
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
