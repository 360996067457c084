package transcription

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// Browser uploads are streamed into uploadDir and removed when their entry
// fails or is cancelled. A transcribed upload moves to audioDir, because
// the page plays it back from the transcript; it is deleted with the
// transcript. Files the desktop app was given by path are never copied.
const (
	uploadDirName = "transcribe-uploads"
	audioDirName  = "transcribe-audio"
)

// UploadDir is where browser uploads are streamed before they are queued.
func UploadDir(dataDir string) string { return filepath.Join(dataDir, uploadDirName) }

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
	f, err := os.CreateTemp(dir, "*-"+SafeName(name))
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

// KeptAudio reports whether path is a copy Hark owns (a kept upload).
func KeptAudio(dataDir, path string) bool {
	rel, err := filepath.Rel(filepath.Join(dataDir, audioDirName), path)
	return err == nil && !strings.HasPrefix(rel, "..") && !strings.ContainsRune(rel, filepath.Separator)
}

// SafeName keeps a file name usable as part of a local file name.
func SafeName(name string) string {
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
