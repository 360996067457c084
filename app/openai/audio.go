package openai

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"

	"hark/app/runner"
	"hark/engine"
	"hark/engine/audio"
	"hark/engine/transcribe"
	"hark/models/profile"
	"hark/models/whisper"
)

// audioRequest is the multipart form of /v1/audio/*.
type audioRequest struct {
	file        string // the upload, on disk
	model       string
	language    string
	prompt      string
	temperature *float64
	format      string
	words       bool // timestamp_granularities[] includes word
	stream      bool
}

// DefaultMaxUpload is the audio upload limit when none is configured.
// It is Settings' default maxUploadMB, 1024 MB (10^6 bytes each).
const DefaultMaxUpload = 1024 * 1_000_000

// readAudioForm reads the form, streaming the file part to a temp file
// (never into memory), within the upload limit.
func (s *server) readAudioForm(r *http.Request) (*audioRequest, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, &Error{Status: 400, Message: "send the audio as multipart/form-data with a file field", Type: typeInvalid}
	}
	limit := int64(DefaultMaxUpload)
	if s.MaxUpload != nil && s.MaxUpload() > 0 {
		limit = s.MaxUpload()
	}
	// Room for the other fields and the multipart framing.
	r.Body = http.MaxBytesReader(nil, r.Body, limit+1<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, &Error{Status: 400, Message: "bad multipart body: " + err.Error(), Type: typeInvalid}
	}
	req := &audioRequest{format: "json"}
	fail := func(err error) (*audioRequest, error) {
		if req.file != "" {
			os.Remove(req.file)
		}
		return nil, err
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return fail(uploadTooLarge(limit))
			}
			return fail(&Error{Status: 400, Message: "bad multipart body: " + err.Error(), Type: typeInvalid})
		}
		name := part.FormName()
		if name == "file" {
			if req.file != "" {
				return fail(badParam("file", "send one file"))
			}
			f, err := os.CreateTemp(s.TempDir, "hark-api-upload-*")
			if err != nil {
				return fail(err)
			}
			req.file = f.Name()
			n, err := io.Copy(f, io.LimitReader(part, limit+1))
			f.Close()
			if err != nil {
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					return fail(uploadTooLarge(limit))
				}
				return fail(&Error{Status: 400, Message: "the upload was cut off: " + err.Error(), Type: typeInvalid})
			}
			if n > limit {
				return fail(uploadTooLarge(limit))
			}
			continue
		}
		b, err := io.ReadAll(io.LimitReader(part, 64<<10))
		if err != nil {
			return fail(&Error{Status: 400, Message: "bad multipart body: " + err.Error(), Type: typeInvalid})
		}
		v := string(b)
		switch name {
		case "model":
			req.model = v
		case "language":
			req.language = v
		case "prompt":
			req.prompt = v
		case "response_format":
			req.format = v
		case "temperature":
			t, err := strconv.ParseFloat(v, 64)
			if err != nil || t < 0 || t > 1 {
				return fail(badParam("temperature", "temperature must be a number between 0 and 1, not %q", v))
			}
			req.temperature = &t
		case "timestamp_granularities[]", "timestamp_granularities":
			switch v {
			case "word":
				req.words = true
			case "segment":
			default:
				return fail(badParam("timestamp_granularities", "timestamp_granularities holds word or segment, not %q", v))
			}
		case "stream":
			req.stream = v == "true"
		}
	}
	if req.file == "" {
		return nil, badParam("file", "the form has no file field: send the audio as file")
	}
	switch req.format {
	case "json", "text", "srt", "vtt", "verbose_json":
	default:
		return fail(badParam("response_format", "response_format must be json, text, srt, vtt or verbose_json, not %q", req.format))
	}
	return req, nil
}

func uploadTooLarge(limit int64) error {
	return &Error{Status: 413, Message: fmt.Sprintf("the audio file is over the %s upload limit (Settings)", engine.FormatBytes(limit)), Type: typeInvalid, Param: "file", Code: "file_too_large"}
}

func (s *server) transcriptions(w http.ResponseWriter, r *http.Request) error {
	return s.audio(w, r, "transcribe")
}

func (s *server) translations(w http.ResponseWriter, r *http.Request) error {
	return s.audio(w, r, "translate")
}

func (s *server) audio(w http.ResponseWriter, r *http.Request, task string) error {
	req, err := s.readAudioForm(r)
	if err != nil {
		return err
	}
	defer os.Remove(req.file)
	if err := sniff(req.file); err != nil {
		return err
	}
	ctx := r.Context()
	m, err := s.resolve(ctx, req.model, profile.KindSpeech)
	if err != nil {
		return err
	}
	opt := transcribe.DefaultOptions()
	opt.Task, opt.InitialPrompt, opt.WordTimestamps = task, req.prompt, req.words
	if req.language != "" {
		code, ok := whisper.LookupLanguage(req.language)
		if !ok {
			return badParam("language", "unknown language %q (use an ISO-639-1 code such as en)", req.language)
		}
		opt.Language = code
	}
	// A temperature given is used alone, as whisper.transcribe(temperature=t)
	// does: 0 is greedy without fallback, reproducible. Without one, the
	// fallback ladder 0, 0.2 ... 1.0 runs.
	if req.temperature != nil {
		opt.Temperatures = []float64{*req.temperature}
	}
	lease, err := s.Runner.Acquire(ctx, runner.Speech, m.Path, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &Error{Status: 503, Message: fmt.Sprintf("cannot load %s: %v", req.model, err), Type: typeServer, Code: "model_load_failed"}
	}
	defer lease.Release()
	var ev *events
	var onSegment func(transcribe.Segment)
	if req.stream {
		if ev, err = newEvents(w); err != nil {
			return err
		}
		onSegment = func(seg transcribe.Segment) {
			ev.send(map[string]any{"type": "transcript.text.delta", "delta": seg.Text, "segment": seg})
		}
	}
	res, err := lease.Speech.TranscribeFile(ctx, req.file, opt, onSegment)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		e := badAudio(req.file, err)
		if ev != nil {
			ev.send(map[string]any{"error": map[string]any{"message": e.Error(), "type": typeInvalid}})
			return errStreamed
		}
		return e
	}
	text := strings.TrimSpace(res.Text)
	if ev != nil {
		ev.send(map[string]any{"type": "transcript.text.done", "text": text})
		ev.done()
		return errStreamed
	}
	switch req.format {
	case "json":
		writeJSON(w, 200, map[string]any{"text": text})
	case "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, text+"\n")
	case "srt", "vtt":
		if req.format == "srt" {
			w.Header().Set("Content-Type", "application/x-subrip; charset=utf-8")
		} else {
			w.Header().Set("Content-Type", "text/vtt; charset=utf-8")
		}
		return transcribe.Write(w, req.format, res)
	case "verbose_json":
		writeJSON(w, 200, verbose(task, res, text, req.words))
	}
	return nil
}

// verbose is OpenAI's verbose_json: words at the top level when asked.
func verbose(task string, res *transcribe.Result, text string, words bool) map[string]any {
	lang := res.Language
	for _, l := range whisper.Languages {
		if l.Code == res.Language {
			lang = l.Name
		}
	}
	segs := []transcribe.Segment{}
	var ws []transcribe.Word
	for _, s := range res.Segments {
		ws = append(ws, s.Words...)
		s.Words = nil
		segs = append(segs, s)
	}
	out := map[string]any{"task": task, "language": lang, "duration": res.Duration.Seconds(), "text": text, "segments": segs}
	if words {
		if ws == nil {
			ws = []transcribe.Word{}
		}
		out["words"] = ws
	}
	return out
}

// sniff refuses a file that is not audio Hark can read, before any model
// is loaded.
func sniff(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, audio.SniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	if n == 0 {
		return badParam("file", "the file is empty")
	}
	if audio.Sniff(head[:n]) == audio.Unknown {
		return &Error{Status: 400, Message: "the file is not audio Hark can read (expected WAV, MP3, FLAC, Ogg, M4A/AAC, AIFF or CAF)", Type: typeInvalid, Param: "file", Code: "invalid_file_format"}
	}
	return nil
}

// badAudio makes a decoding failure the client's 400, without the temp
// path.
func badAudio(path string, err error) error {
	msg := strings.ReplaceAll(err.Error(), path+": ", "")
	msg = strings.ReplaceAll(msg, path, "the file")
	var fe *audio.FileError
	if errors.As(err, &fe) || errors.Is(err, transcribe.ErrNoAudio) || errors.Is(err, audio.ErrEmpty) || errors.Is(err, audio.ErrBadHeader) || errors.Is(err, audio.ErrTruncated) {
		return &Error{Status: 400, Message: "cannot read the audio: " + msg, Type: typeInvalid, Param: "file", Code: "invalid_file_format"}
	}
	return fmt.Errorf("transcription failed: %s", msg)
}
