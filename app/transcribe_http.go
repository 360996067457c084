package app

import (
	"context"
	"errors"
	"fmt"
	"hark/app/apierr"
	"hark/app/transcription"
	"hark/engine"
	"hark/engine/audio"
	"hark/engine/transcribe"
	"hark/library/store"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The transcription feature's HTTP-only handlers (uploads, audio, exports)
// and the methods that reach beyond it (saving through the native dialog,
// asking a chat model); the queue itself is app/transcription.

// maxUploadBytes bounds one upload: hours of WAV fit, a runaway request
// does not fill the disk.
const maxUploadBytes = 8_000_000_000

// serveExport answers GET /api/transcripts/{id}/export/{format}[?words=word|karaoke]
// with the file as a download; words asks for one SRT/VTT cue per word, or
// karaoke VTT, from a transcript made with word timestamps.
func (s *Service) serveExport(w http.ResponseWriter, req *http.Request, id int64) error {
	t, err := s.GetTranscript(id)
	if err != nil {
		return err
	}
	format := req.PathValue("format")
	b, err := transcription.RenderWith(t, format, transcribe.WriteOptions{Words: req.URL.Query().Get("words")})
	if err != nil {
		return err
	}
	name := transcription.ExportName(t, format)
	w.Header().Set("Content-Type", transcription.ExportTypes[format])
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"; filename*=UTF-8''%s`, asciiName(name), url.PathEscape(name)))
	w.Header().Set("Cache-Control", "no-store")
	_, err = w.Write(b)
	return err
}

// asciiName is the fallback filename= for old clients: non-ASCII and
// quotes replaced.
func asciiName(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '_'
		}
		return r
	}, s)
}

// SaveTranscriptExport saves an export where the native save dialog says
// (Downloads without one) and returns its path, "" when cancelled.
func (s *Service) SaveTranscriptExport(id int64, format string) (string, error) {
	t, err := s.GetTranscript(id)
	if err != nil {
		return "", err
	}
	b, err := transcription.Render(t, format)
	if err != nil {
		return "", err
	}
	name := transcription.ExportName(t, format)
	ext := filepath.Ext(name)
	return s.app.saveExport(name, b, FileFilter{DisplayName: strings.ToUpper(strings.TrimPrefix(ext, ".")), Pattern: "*" + ext})
}

// AskAboutTranscript starts a chat about a transcript: a conversation
// whose system prompt carries the timed text, so it stays in context however
// long the thread grows (the chat trims old turns, never the system prompt).
func (s *Service) AskAboutTranscript(id int64) (store.Conversation, error) {
	t, err := s.GetTranscript(id)
	if err != nil {
		return store.Conversation{}, err
	}
	prompt, err := transcription.Prompt(t)
	if err != nil {
		return store.Conversation{}, err
	}
	model, err := s.askModel()
	if err != nil {
		return store.Conversation{}, err
	}
	if prompt, err = s.fitTranscript(t, model, prompt); err != nil {
		return store.Conversation{}, err
	}
	return s.CreateConversation(NewConversation{Title: "About " + t.SourceName, SystemPrompt: prompt, Model: model, TranscriptID: t.ID})
}

// askModel picks the chat model for a question about a transcript: the
// default when it can answer here, else the chat model that fits best.
// A base model cannot hold a conversation, and one too big for memory
// cannot load; when no model qualifies the user is told what to get.
func (s *Service) askModel() (string, error) {
	ms, err := s.ListChatModels()
	if err != nil {
		return "", err
	}
	// Judged for the KV cache the new conversation will keep (Settings').
	kv := s.app.newChatKV()
	fit := func(m ChatModel) string { return m.FitFor(kv) }
	usable := func(m ChatModel) bool { return !m.Completion && m.Problem == "" && fit(m) != string(engine.FitTooBig) }
	st, _ := s.app.DB.Settings(context.Background())
	for _, m := range ms {
		if m.ID == st.DefaultChatModel && usable(m) {
			return m.ID, nil
		}
	}
	best := -1
	for i, m := range ms {
		if usable(m) && (best < 0 || fit(m) == string(engine.FitFits) && fit(ms[best]) != string(engine.FitFits)) {
			best = i
		}
	}
	if best < 0 {
		return "", apierr.BadRequest(errors.New("no chat model in your Library can answer about this transcript here (base models cannot chat, and models too big for this computer's memory cannot load): pull a chat model from the Library, for example one of the starter models"))
	}
	return ms[best].ID, nil
}

// serveUpload takes a file as the raw request body:
// POST /api/transcribe/upload?name=NAME[&size=BYTES&model=&language=&task=&beamSize=&noFallback=1&noVAD=1]
// and the advanced knobs of AdvancedFromQuery.
// The body is streamed to disk, never held in memory.
func (s *Service) serveUpload(w http.ResponseWriter, req *http.Request) error {
	q := req.URL.Query()
	name := strings.TrimSpace(q.Get("name"))
	if name == "" {
		return apierr.BadRequest(errors.New("upload needs ?name=FILE_NAME"))
	}
	beam := 0
	if b := q.Get("beamSize"); b != "" {
		n, err := strconv.Atoi(b)
		if err != nil {
			return apierr.BadRequest(fmt.Errorf("beamSize %q is not a number", b))
		}
		beam = n
	}
	raw := TranscribeOptions{
		Model: q.Get("model"), Language: q.Get("language"), Task: q.Get("task"),
		BeamSize: beam, NoFallback: q.Get("noFallback") == "1" || q.Get("noFallback") == "true",
		NoVAD:          q.Get("noVAD") == "1" || q.Get("noVAD") == "true",
		WordTimestamps: q.Get("wordTimestamps") == "1" || q.Get("wordTimestamps") == "true",
	}
	if err := transcription.AdvancedFromQuery(q, &raw); err != nil {
		return apierr.BadRequest(err)
	}
	opt, err := raw.Normalize()
	if err != nil {
		return apierr.BadRequest(err)
	}
	dir := transcription.UploadDir(s.app.DataDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "upload-*-"+transcription.SafeName(name))
	if err != nil {
		return fmt.Errorf("store upload: %w", err)
	}
	path := f.Name()
	got, err := io.Copy(f, http.MaxBytesReader(w, req.Body, maxUploadBytes))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	// ?size= is what the page meant to send. A webview whose custom scheme
	// drops request bodies (WebKitGTK builds without webkit2_40) delivers
	// none; say so rather than report the file as empty.
	if want, perr := strconv.ParseInt(q.Get("size"), 10, 64); err == nil && perr == nil && want != got {
		os.Remove(path)
		return apierr.BadRequest(fmt.Errorf("%s arrived incomplete (%d of %d bytes); drop the file on the window instead", name, got, want))
	}
	if err != nil {
		os.Remove(path)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return apierr.TooLarge(fmt.Errorf("%s is larger than %s", name, engine.FormatBytes(maxUploadBytes)))
		}
		return fmt.Errorf("receive %s: %w", name, err)
	}
	it := s.app.transcriber().Add(path, transcription.DisplayName(name), true, opt)
	writeJSON(w, http.StatusOK, it)
	return nil
}

// serveAudio plays a transcript's source with Range support. The path
// comes from the transcript row, which only Hark writes, never from the
// request, so the route cannot be used to read other files.
func (s *Service) serveAudio(w http.ResponseWriter, req *http.Request, id int64) error {
	t, err := s.GetTranscript(id)
	if err != nil {
		return err
	}
	f, err := os.Open(t.SourcePath)
	if errors.Is(err, os.ErrNotExist) {
		return apierr.NotFound(fmt.Errorf("the audio of %s is no longer at %s", t.SourceName, t.SourcePath))
	}
	if err != nil {
		return fmt.Errorf("open audio of %s: %w", t.SourceName, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("open audio of %s: %w", t.SourceName, err)
	}
	if !st.Mode().IsRegular() {
		return apierr.NotFound(fmt.Errorf("the audio of %s is not a file any more", t.SourceName))
	}
	// <audio> needs a Content-Type that Go's mime table may not know on
	// every OS; the formats table has it.
	if f, ok := audio.FormatByName(t.SourceName); ok {
		w.Header().Set("Content-Type", f.MIME)
	}
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, req, t.SourceName, st.ModTime(), f)
	return nil
}

func (a *App) transcriber() *transcription.Queue { return a.queue }
