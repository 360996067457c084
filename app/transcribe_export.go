package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"hark/engine"
	"hark/engine/transcribe"
	"hark/library/store"
)

// exportTypes are the Content-Types of the export formats.
var exportTypes = map[string]string{
	"txt": "text/plain; charset=utf-8", "srt": "application/x-subrip; charset=utf-8",
	"vtt": "text/vtt; charset=utf-8", "json": "application/json; charset=utf-8",
}

// renderTranscript writes a stored transcript in one of the engine's
// formats; the segments are stored in the shape its writers read.
func renderTranscript(t store.Transcript, format string) ([]byte, error) {
	return renderTranscriptWith(t, format, transcribe.WriteOptions{})
}

// renderTranscriptWith is renderTranscript with subtitle options (word
// cues).
func renderTranscriptWith(t store.Transcript, format string, o transcribe.WriteOptions) ([]byte, error) {
	if !slices.Contains(transcribe.Formats, format) {
		return nil, BadRequest(fmt.Errorf("unknown export format %q (want %s)", format, strings.Join(transcribe.Formats, ", ")))
	}
	var segs []transcribe.Segment
	if err := json.Unmarshal(t.Segments, &segs); err != nil {
		return nil, fmt.Errorf("transcript %d has unreadable segments: %w", t.ID, err)
	}
	var b bytes.Buffer
	r := &transcribe.Result{Text: t.Text, Segments: segs, Language: t.Language, Duration: t.Duration}
	if err := transcribe.WriteWith(&b, format, r, o); err != nil {
		if o.Words != "" {
			return nil, BadRequest(err)
		}
		return nil, fmt.Errorf("export %s as %s: %w", t.SourceName, format, err)
	}
	return b.Bytes(), nil
}

// exportName is the file name for an export: the audio's name with the
// format's extension.
func exportName(t store.Transcript, format string) string {
	base := strings.TrimSuffix(safeName(t.SourceName), filepath.Ext(t.SourceName))
	if base == "" {
		base = fmt.Sprintf("transcript-%d", t.ID)
	}
	return base + "." + format
}

// serveExport answers GET /api/transcripts/{id}/export/{format}[?words=word|karaoke]
// with the file as a download; words asks for one SRT/VTT cue per word, or
// karaoke VTT, from a transcript made with word timestamps.
func (s *Service) serveExport(w http.ResponseWriter, req *http.Request, id int64) error {
	t, err := s.GetTranscript(id)
	if err != nil {
		return err
	}
	format := req.PathValue("format")
	b, err := renderTranscriptWith(t, format, transcribe.WriteOptions{Words: req.URL.Query().Get("words")})
	if err != nil {
		return err
	}
	name := exportName(t, format)
	w.Header().Set("Content-Type", exportTypes[format])
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
	b, err := renderTranscript(t, format)
	if err != nil {
		return "", err
	}
	name := exportName(t, format)
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
	prompt, err := transcriptPrompt(t)
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
	usable := func(m ChatModel) bool { return !m.Completion && m.Problem == "" && m.Fit != string(engine.FitTooBig) }
	st, _ := s.app.DB.Settings(context.Background())
	for _, m := range ms {
		if m.ID == st.DefaultChatModel && usable(m) {
			return m.ID, nil
		}
	}
	best := -1
	for i, m := range ms {
		if usable(m) && (best < 0 || m.Fit == string(engine.FitFits) && ms[best].Fit != string(engine.FitFits)) {
			best = i
		}
	}
	if best < 0 {
		return "", BadRequest(errors.New("no chat model in your Library can answer about this transcript here (base models cannot chat, and models too big for this computer's memory cannot load): pull a chat model from the Library, for example one of the starter models"))
	}
	return ms[best].ID, nil
}

// transcriptPrompt frames the transcript for the chat model, one timed
// line per segment so answers can point at moments.
func transcriptPrompt(t store.Transcript) (string, error) {
	lines, err := transcriptLines(t)
	if err != nil {
		return "", err
	}
	return transcriptFrame(t) + "Answer from the transcript; cite times as [m:ss] when it helps, and say so when the transcript does not contain the answer.\n\nTranscript:\n" +
		strings.Join(lines, "\n") + "\n", nil
}

// transcriptFrame says what the transcript is: the recording, its length
// and language, and how it was made.
func transcriptFrame(t store.Transcript) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The user wants to talk about the transcript of the recording %q", t.SourceName)
	if t.Duration > 0 {
		fmt.Fprintf(&b, " (%s long", clockOf(t.Duration))
		if t.Language != "" {
			fmt.Fprintf(&b, ", language %s", t.Language)
		}
		b.WriteString(")")
	}
	b.WriteString(". It was made automatically with Whisper and may contain recognition mistakes. ")
	return b.String()
}

// transcriptLines are the transcript's segments, one timed line each.
func transcriptLines(t store.Transcript) ([]string, error) {
	var segs []transcribe.Segment
	if err := json.Unmarshal(t.Segments, &segs); err != nil {
		return nil, fmt.Errorf("transcript %d has unreadable segments: %w", t.ID, err)
	}
	var lines []string
	for _, sg := range segs {
		if text := strings.TrimSpace(sg.Text); text != "" {
			lines = append(lines, fmt.Sprintf("[%s] %s", clockOf(time.Duration(sg.StartSec*float64(time.Second))), text))
		}
	}
	if len(lines) == 0 {
		return nil, BadRequest(fmt.Errorf("the transcript of %s has no text to ask about", t.SourceName))
	}
	return lines, nil
}

// clockOf formats a position as m:ss or h:mm:ss.
func clockOf(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
