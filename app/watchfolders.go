package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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
// watcher runs in the instance that holds the data folder's lock
// (watchfolders_run.go).

// WatchFolderRequest adds a watch folder.
type WatchFolderRequest struct {
	Path string `json:"path"`
	// OutputDir receives the transcripts; "" writes them beside the audio.
	OutputDir string `json:"outputDir"`
	// Formats are export formats (txt, srt, vtt, json); none means txt.
	Formats []string          `json:"formats"`
	Options TranscribeOptions `json:"options"`
}

// WatchFolder is a watched folder, with whether it is watched right now
// and what became of its latest files.
type WatchFolder struct {
	ID        int64             `json:"id"`
	Path      string            `json:"path"`
	OutputDir string            `json:"outputDir"`
	Formats   []string          `json:"formats"`
	Options   TranscribeOptions `json:"options"`
	Watching  bool              `json:"watching"`
	// Error says why the folder is not watched (gone, unreadable).
	Error string            `json:"error,omitempty"`
	Files []store.WatchFile `json:"files"`
}

// recentWatchFiles is how many of a folder's files the list shows.
const recentWatchFiles = 20

func (r WatchFolderRequest) check() (WatchFolderRequest, error) {
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
	r.Options, err = r.Options.normalize()
	return r, err
}

// WatchFolders lists the watch folders.
func (s *Service) WatchFolders() ([]WatchFolder, error) {
	ctx := context.Background()
	fs, err := s.app.DB.WatchFolders(ctx)
	if err != nil {
		return nil, err
	}
	w := s.app.watcher()
	out := make([]WatchFolder, 0, len(fs))
	for _, f := range fs {
		wf := watchFolderOf(f)
		if w != nil {
			wf.Watching, wf.Error = w.status(f.ID)
		} else {
			wf.Error = "another Hark instance owns this data folder"
		}
		files, err := s.app.DB.WatchFiles(ctx, f.ID)
		if err != nil {
			return nil, err
		}
		wf.Files = files[:min(len(files), recentWatchFiles)]
		out = append(out, wf)
	}
	return out, nil
}

func watchFolderOf(f store.WatchFolder) WatchFolder {
	wf := WatchFolder{ID: f.ID, Path: f.Path, OutputDir: f.OutputDir, Formats: f.Formats, Files: []store.WatchFile{}}
	_ = json.Unmarshal(f.Options, &wf.Options) // written by AddWatchFolder; a bad one keeps the defaults
	return wf
}

// AddWatchFolder starts watching a folder. The files already there are
// left alone: only files that arrive from now on are transcribed.
func (s *Service) AddWatchFolder(req WatchFolderRequest) (WatchFolder, error) {
	req, err := req.check()
	if err != nil {
		return WatchFolder{}, BadRequest(err)
	}
	opts, err := json.Marshal(req.Options)
	if err != nil {
		return WatchFolder{}, err
	}
	ctx := context.Background()
	f, err := s.app.DB.AddWatchFolder(ctx, store.WatchFolder{Path: req.Path, OutputDir: req.OutputDir, Formats: req.Formats, Options: opts})
	if errors.Is(err, store.ErrExists) {
		return WatchFolder{}, Conflict(err)
	}
	if err != nil {
		return WatchFolder{}, err
	}
	wf := watchFolderOf(f)
	if w := s.app.watcher(); w != nil {
		if err := w.baseline(ctx, f); err != nil {
			s.app.Log.Warn("watch folder: baseline", "folder", f.Path, "err", err)
		}
		w.start(f)
		wf.Watching, wf.Error = w.status(f.ID)
	}
	s.app.Events.Publish("watch-folders", wf)
	return wf, nil
}

// RemoveWatchFolder stops watching a folder; files and transcripts stay.
func (s *Service) RemoveWatchFolder(id int64) error {
	if w := s.app.watcher(); w != nil {
		w.stopFolder(id)
	}
	if err := s.app.DB.DeleteWatchFolder(context.Background(), id); err != nil {
		return transcriptErr(err)
	}
	s.app.Events.Publish("watch-folders", map[string]int64{"removed": id})
	return nil
}

func (s *Service) watchRoutes(r *router) {
	r.handle("GET /api/watch-folders", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.WatchFolders)
	})
	r.handle("POST /api/watch-folders", func(w http.ResponseWriter, req *http.Request) error {
		var in WatchFolderRequest
		if err := decode(req, &in); err != nil {
			return err
		}
		return reply(w, func() (WatchFolder, error) { return s.AddWatchFolder(in) })
	})
	r.handle("DELETE /api/watch-folders/{id}", byID("watch folder", func(w http.ResponseWriter, req *http.Request, id int64) error {
		if err := s.RemoveWatchFolder(id); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}))
}

// writeWatchOutputs writes a finished transcript in the folder's formats,
// never over an existing file ("name (2).txt"), and returns the paths.
func writeWatchOutputs(t store.Transcript, dir string, formats []string) ([]string, error) {
	var out []string
	for _, f := range formats {
		b, err := renderTranscript(t, f)
		if err != nil {
			return out, err
		}
		p, err := saveNew(dir, exportName(t, f), b)
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
