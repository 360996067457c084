package watch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"hark/app/savefile"
	"hark/app/transcription"
	"hark/engine/transcribe"
	"hark/library/store"
)

// Watch folders (MacWhisper's "hot folder"): each new audio file in a
// watched folder is queued for transcription with the folder's model and
// options once its size has settled, and the transcript is written beside
// it or into the folder's output folder in its formats. What became of
// each file is kept in SQLite (store.WatchFile), so a restart does not
// redo a file; a file that was being transcribed when Hark stopped is
// retried at the next start and resumes from its last saved window. The
// Watcher runs in the instance that holds the data folder's lock
// (watcher.go).

// Request adds a watch folder.
type Request struct {
	Path string `json:"path"`
	// OutputDir receives the transcripts; "" writes them beside the audio.
	OutputDir string `json:"outputDir"`
	// Formats are export formats (txt, srt, vtt, json); none means txt.
	Formats []string              `json:"formats"`
	Options transcription.Options `json:"options"`
}

// Folder is a watched folder, with whether it is watched right now
// and what became of its latest files.
type Folder struct {
	ID        int64                 `json:"id"`
	Path      string                `json:"path"`
	OutputDir string                `json:"outputDir"`
	Formats   []string              `json:"formats"`
	Options   transcription.Options `json:"options"`
	Watching  bool                  `json:"watching"`
	// Error says why the folder is not watched (gone, unreadable).
	Error string            `json:"error,omitempty"`
	Files []store.WatchFile `json:"files"`
}

// RecentFiles is how many of a folder's files the list shows.
const RecentFiles = 20

// Check cleans the paths and formats, checks the folders exist, and
// normalizes the transcription options.
func (r Request) Check() (Request, error) {
	r.Path, r.OutputDir = strings.TrimSpace(r.Path), strings.TrimSpace(r.OutputDir)
	if r.Path == "" || !filepath.IsAbs(r.Path) {
		return r, fmt.Errorf("watch folder %q: give the full path of a folder", r.Path)
	}
	r.Path = filepath.Clean(r.Path)
	st, err := os.Stat(r.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return r, fmt.Errorf("watch folder %s does not exist", r.Path)
	case err != nil:
		return r, fmt.Errorf("watch folder %s: %w", r.Path, err)
	case !st.IsDir():
		return r, fmt.Errorf("watch folder %s is a file, not a folder", r.Path)
	}
	if r.OutputDir != "" {
		if !filepath.IsAbs(r.OutputDir) {
			return r, fmt.Errorf("output folder %q: give a full path, or none to write beside the audio", r.OutputDir)
		}
		r.OutputDir = filepath.Clean(r.OutputDir)
		if st, err := os.Stat(r.OutputDir); err == nil && !st.IsDir() {
			return r, fmt.Errorf("output folder %s is a file, not a folder", r.OutputDir)
		}
	}
	if len(r.Formats) == 0 {
		r.Formats = []string{"txt"}
	}
	seen := map[string]bool{}
	var formats []string
	for _, f := range r.Formats {
		f = strings.ToLower(strings.TrimSpace(f))
		if !slices.Contains(transcribe.Formats, f) {
			return r, fmt.Errorf("format %q: want %s", f, strings.Join(transcribe.Formats, ", "))
		}
		if !seen[f] {
			seen[f] = true
			formats = append(formats, f)
		}
	}
	r.Formats = formats
	r.Options, err = r.Options.Normalize()
	return r, err
}

// FolderOf is a stored folder as the UI shows it, before its state and
// files are filled in.
func FolderOf(f store.WatchFolder) Folder {
	wf := Folder{ID: f.ID, Path: f.Path, OutputDir: f.OutputDir, Formats: f.Formats, Files: []store.WatchFile{}}
	_ = json.Unmarshal(f.Options, &wf.Options) // written by AddWatchFolder; a bad one keeps the defaults
	return wf
}

// writeWatchOutputs writes a finished transcript in the folder's formats,
// never over an existing file ("name (2).txt"), and returns the paths.
func writeWatchOutputs(t store.Transcript, dir string, formats []string) ([]string, error) {
	var out []string
	for _, f := range formats {
		b, err := transcription.Render(t, f)
		if err != nil {
			return out, err
		}
		p, err := savefile.Unique(dir, transcription.ExportName(t, f), b)
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// settledFile is a file's size and modification time at one look.
type settledFile struct {
	size  int64
	mtime time.Time
}

func statOf(st os.FileInfo) settledFile {
	return settledFile{st.Size(), st.ModTime().Truncate(time.Millisecond)}
}
