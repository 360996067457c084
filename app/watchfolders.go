package app

import (
	"context"
	"encoding/json"
	"errors"
	"hark/app/watch"
	"hark/library/store"
	"net/http"
)

// The watch folders' bound methods and routes; the watcher and the folder
// types are app/watch.

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
		wf := watch.FolderOf(f)
		if w != nil {
			wf.Watching, wf.Error = w.Status(f.ID)
		} else {
			wf.Error = "another Hark instance owns this data folder"
		}
		files, err := s.app.DB.WatchFiles(ctx, f.ID)
		if err != nil {
			return nil, err
		}
		wf.Files = files[:min(len(files), watch.RecentFiles)]
		out = append(out, wf)
	}
	return out, nil
}

// AddWatchFolder starts watching a folder. The files already there are
// left alone: only files that arrive from now on are transcribed.
func (s *Service) AddWatchFolder(req WatchFolderRequest) (WatchFolder, error) {
	req, err := req.Check()
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
	wf := watch.FolderOf(f)
	if w := s.app.watcher(); w != nil {
		if err := w.Baseline(ctx, f); err != nil {
			s.app.Log.Warn("watch folder: baseline", "folder", f.Path, "err", err)
		}
		w.Watch(f)
		wf.Watching, wf.Error = w.Status(f.ID)
	}
	s.app.Events.Publish("watch-folders", wf)
	return wf, nil
}

// RemoveWatchFolder stops watching a folder; files and transcripts stay.
func (s *Service) RemoveWatchFolder(id int64) error {
	if w := s.app.watcher(); w != nil {
		w.StopFolder(id)
	}
	if err := s.app.DB.DeleteWatchFolder(context.Background(), id); err != nil {
		return transcriptErr(err)
	}
	s.app.Events.Publish("watch-folders", map[string]int64{"removed": id})
	return nil
}

// watchRoutes mirror the bound methods for hark serve.
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

func (a *App) watcher() *watch.Watcher { return a.watch }
