package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"hark/engine/audio"
)

// Browser uploads are streamed into uploadDir and removed when their entry
// fails or is cancelled. A transcribed upload moves to audioDir, because
// the page plays it back from the transcript; it is deleted with the
// transcript. Files the desktop app was given by path are never copied.
const (
	uploadDirName = "transcribe-uploads"
	audioDirName  = "transcribe-audio"
	// maxUploadBytes bounds one upload: hours of WAV fit, a runaway
	// request does not fill the disk.
	maxUploadBytes = 8 << 30
)

// resetUploads removes from the upload folder what no restored queue
// entry refers to (keep): half-received uploads a crash left behind.
func resetUploads(dataDir string, keep map[string]bool) error {
	dir := filepath.Join(dataDir, uploadDirName)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clear %s: %w", dir, err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if keep[p] {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("clear %s: %w", p, err)
		}
	}
	return nil
}

func removeUpload(log *slog.Logger, path string) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Warn("remove upload", "path", path, "err", err)
	}
}

// keepUpload moves a transcribed upload next to Hark's other kept audio
// and returns its new path.
func keepUpload(dataDir, src, name string) (string, error) {
	dir := filepath.Join(dataDir, audioDirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "*-"+safeName(name))
	if err != nil {
		return "", fmt.Errorf("keep audio of %s: %w", name, err)
	}
	dst := f.Name()
	f.Close()
	if err := os.Rename(src, dst); err != nil {
		os.Remove(dst)
		return "", fmt.Errorf("keep audio of %s: %w", name, err)
	}
	return dst, nil
}

// keptAudio reports whether path is a copy Hark owns (a kept upload).
func keptAudio(dataDir, path string) bool {
	rel, err := filepath.Rel(filepath.Join(dataDir, audioDirName), path)
	return err == nil && !strings.HasPrefix(rel, "..") && !strings.ContainsRune(rel, filepath.Separator)
}

// safeName keeps a file name usable as part of a local file name.
func safeName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '/' || r == 0 || unicode.IsControl(r):
			b.WriteRune('_')
		default:
			b.WriteRune(r)
		}
	}
	s := b.String()
	if len(s) > 120 {
		s = s[len(s)-120:]
	}
	if s == "" || s == "." || s == ".." {
		s = "audio"
	}
	return s
}

// serveUpload takes a file as the raw request body:
// POST /api/transcribe/upload?name=NAME[&size=BYTES&model=&language=&task=&beamSize=&noFallback=1&noVAD=1]
// and the advanced knobs of advancedFromQuery.
// The body is streamed to disk, never held in memory.
func (s *Service) serveUpload(w http.ResponseWriter, req *http.Request) error {
	q := req.URL.Query()
	name := strings.TrimSpace(q.Get("name"))
	if name == "" {
		return BadRequest(errors.New("upload needs ?name=FILE_NAME"))
	}
	beam := 0
	if b := q.Get("beamSize"); b != "" {
		n, err := strconv.Atoi(b)
		if err != nil {
			return BadRequest(fmt.Errorf("beamSize %q is not a number", b))
		}
		beam = n
	}
	raw := TranscribeOptions{
		Model: q.Get("model"), Language: q.Get("language"), Task: q.Get("task"),
		BeamSize: beam, NoFallback: q.Get("noFallback") == "1" || q.Get("noFallback") == "true",
		NoVAD:          q.Get("noVAD") == "1" || q.Get("noVAD") == "true",
		WordTimestamps: q.Get("wordTimestamps") == "1" || q.Get("wordTimestamps") == "true",
	}
	if err := advancedFromQuery(q, &raw); err != nil {
		return BadRequest(err)
	}
	opt, err := raw.normalize()
	if err != nil {
		return BadRequest(err)
	}
	dir := filepath.Join(s.app.DataDir, uploadDirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "upload-*-"+safeName(name))
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
		return BadRequest(fmt.Errorf("%s arrived incomplete (%d of %d bytes); drop the file on the window instead", name, got, want))
	}
	if err != nil {
		os.Remove(path)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &statusError{http.StatusRequestEntityTooLarge, fmt.Errorf("%s is larger than %d GB", name, maxUploadBytes>>30)}
		}
		return fmt.Errorf("receive %s: %w", name, err)
	}
	it := s.app.transcriber().add(path, displayName(name), true, opt)
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
		return NotFound(fmt.Errorf("the audio of %s is no longer at %s", t.SourceName, t.SourcePath))
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
		return NotFound(fmt.Errorf("the audio of %s is not a file any more", t.SourceName))
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
