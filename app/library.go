package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"hark/app/libsvc"
	"hark/engine"
	"hark/library"
	"hark/library/store"
	"hark/models/profile"
)

// LibraryRoots are the roots for the given settings: the HF cache from the
// environment, then the user's extra roots.
func LibraryRoots(s store.Settings) []library.Root { return libsvc.Roots(os.Getenv, s) }

// LibraryEvent is published on the "library" topic when the index changes.
type LibraryEvent = libsvc.Event

func (a *App) library() *library.Library { return a.lib.Library() }

// ModelDetails is a model with its config.json for the details panel.
type ModelDetails struct {
	library.Model
	Config      json.RawMessage `json:"config,omitempty"`
	ConfigError string          `json:"configError,omitempty"`
}

// ListModels returns every indexed model.
func (s *Service) ListModels() ([]library.Model, error) {
	ms, err := s.app.library().List(context.Background())
	return s.app.fits.Apply(ms, s.app.libraryFit()), err
}

// GetModel returns one model by fingerprint, org/repo[@rev] or path.
func (s *Service) GetModel(id string) (ModelDetails, error) {
	m, err := s.app.library().Get(context.Background(), id)
	if err != nil {
		return ModelDetails{}, libErr(err)
	}
	d := ModelDetails{Model: s.app.fits.Apply([]library.Model{m}, s.app.libraryFit())[0]}
	b, err := os.ReadFile(filepath.Join(m.Path, "config.json"))
	switch {
	case err != nil:
		d.ConfigError = err.Error()
	case len(b) > 1<<20:
		d.ConfigError = fmt.Sprintf("config.json is %d bytes; too large to show", len(b))
	case !json.Valid(b):
		d.ConfigError = "config.json is not valid JSON"
	default:
		d.Config = b
	}
	return d, nil
}

// LibraryStatus reports roots and whether the watcher runs.
func (s *Service) LibraryStatus() (library.Status, error) { return s.app.library().Status(), nil }

// RescanModels rescans every root now.
func (s *Service) RescanModels() (library.ScanResult, error) {
	return s.app.library().Scan(context.Background())
}

// VerifyModel starts a verify job; an empty id verifies every model.
func (s *Service) VerifyModel(id string) (Job, error) {
	lib := s.app.library()
	var targets []library.Model
	if id == "" {
		ms, err := lib.List(context.Background())
		if err != nil {
			return Job{}, err
		}
		targets = ms
	} else {
		m, err := lib.Resolve(context.Background(), id)
		if err != nil {
			return Job{}, libErr(err)
		}
		targets = []library.Model{m}
	}
	title := "Verify all models"
	if id != "" {
		title = "Verify " + targets[0].ID
	}
	return s.app.Jobs.Start("verify", title, "bytes", func(ctx context.Context, progress Progress) (any, error) {
		var out []library.VerifyResult
		for i, m := range targets {
			r, err := lib.Verify(ctx, m.Path, func(done, total int64, msg string) {
				progress(done, total, fmt.Sprintf("%d/%d %s %s", i+1, len(targets), m.ID, msg))
			})
			if err != nil {
				return out, err
			}
			out = append(out, r)
		}
		if id != "" {
			return out[0], nil
		}
		return out, nil
	}), nil
}

// DeleteRequest asks to delete a snapshot (or its whole repo). DryRun
// only reports the space that would be freed, for the confirmation.
type DeleteRequest struct {
	ID     string `json:"id"`
	Repo   bool   `json:"repo"`
	DryRun bool   `json:"dryRun"`
}

// DeleteModel deletes a snapshot or repo and reports the space freed.
func (s *Service) DeleteModel(req DeleteRequest) (library.DeleteResult, error) {
	r, err := s.app.library().Delete(context.Background(), req.ID, req.Repo, req.DryRun)
	return r, libErr(err)
}

// PullModel starts downloading org/repo[@revision] into the HF cache.
func (s *Service) PullModel(ref string) (Job, error) {
	repo, rev, err := library.ParsePullRef(ref)
	if err != nil {
		return Job{}, BadRequest(err)
	}
	return s.startPull("Pull "+ref, s.app.library().Roots()[0].Path, repo, rev), nil
}

// startPull runs a pull of repo@rev into the HF cache folder cache as a job.
func (s *Service) startPull(title, cache, repo, rev string) Job {
	lib := s.app.library()
	return s.app.Jobs.Start("pull", title, "bytes", func(ctx context.Context, progress Progress) (any, error) {
		p := library.NewPuller(library.PullOptions{Cache: cache, Getenv: os.Getenv})
		res, err := p.Pull(ctx, repo, rev, library.Progress(progress))
		// The watcher would see it too; rescanning now makes the job's
		// end and the library row arrive together (a failed pull leaves
		// the snapshot Incomplete, and the row says so).
		lib.RescanUnit(context.Background(), cache, filepath.Join(cache, library.RepoFolder(repo)))
		if err != nil {
			return nil, err
		}
		return res, nil
	})
}

// hubTimeout bounds one search or card request, so a hub that stalls
// cannot leave the Library waiting without end.
const hubTimeout = 30 * time.Second

// SearchHub asks the Hugging Face Hub (HF_ENDPOINT, HF_TOKEN) for models,
// most downloaded first.
func (s *Service) SearchHub(q library.SearchQuery) ([]library.HubModel, error) {
	if q.Kind != "" && q.Kind != profile.KindChat && q.Kind != profile.KindSpeech {
		return nil, BadRequest(fmt.Errorf("kind must be chat or speech, not %q", q.Kind))
	}
	ctx, cancel := context.WithTimeout(context.Background(), hubTimeout)
	defer cancel()
	res, err := library.NewPuller(library.PullOptions{Getenv: os.Getenv}).Search(ctx, q)
	if res == nil && err == nil {
		res = []library.HubModel{}
	}
	// Before a pull only the weights' size is known.
	budget := engine.MemoryBudget()
	for i := range res {
		if b := res[i].Bytes; b > 0 {
			res[i].Fit = string(engine.Verdict(engine.WeightsOnly(b).Total, budget))
		}
	}
	return res, err
}

// HubCard describes a Hub repo before it is pulled: files, sizes and the
// model card.
func (s *Service) HubCard(repo string) (library.HubCard, error) {
	if err := library.ValidRepoID(repo); err != nil {
		return library.HubCard{}, BadRequest(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hubTimeout)
	defer cancel()
	return library.NewPuller(library.PullOptions{Getenv: os.Getenv}).Card(ctx, repo)
}

// StarterModels is the starter shelf: small models Hark runs, suggested
// while the Library is empty.
func (s *Service) StarterModels() ([]library.Starter, error) { return library.Starters() }

// openFolder shows a folder in the file manager; tests replace it.
var openFolder = func(path string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("cannot open the folder: %s is not installed", name)
	}
	cmd := exec.Command(bin, path)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot open the folder with %s: %w", name, err)
	}
	go cmd.Wait()
	return nil
}

// OpenModelFolder shows the model's folder (Finder on macOS).
func (s *Service) OpenModelFolder(id string) (string, error) {
	m, err := s.app.library().Resolve(context.Background(), id)
	if err != nil {
		return "", libErr(err)
	}
	return m.Path, openFolder(m.Path)
}

func libErr(err error) error {
	if errors.Is(err, library.ErrNotFound) {
		return NotFound(err)
	}
	return err
}

// libraryRoutes mirror the bound methods so frontend/src/lib/api.ts can
// declare each as one endpoint: a model ID travels as one URL-encoded path
// segment ({id}), and a method's single non-ID argument is the JSON body.
func (s *Service) libraryRoutes(r *router) {
	r.handle("GET /api/models", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.ListModels)
	})
	r.handle("GET /api/models/status", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.LibraryStatus)
	})
	r.handle("GET /api/models/{id}", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, func() (ModelDetails, error) { return s.GetModel(req.PathValue("id")) })
	})
	r.handle("POST /api/models/rescan", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.RescanModels)
	})
	r.handle("POST /api/models/verify-all", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, func() (Job, error) { return s.VerifyModel("") })
	})
	r.handle("POST /api/models/{id}/verify", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, func() (Job, error) { return s.VerifyModel(req.PathValue("id")) })
	})
	r.handle("GET /api/models/hub", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.HubStatus)
	})
	r.handle("POST /api/models/{id}/resume", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, func() (Job, error) { return s.ResumeModel(req.PathValue("id")) })
	})
	r.handle("POST /api/models/{id}/open", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, func() (string, error) { return s.OpenModelFolder(req.PathValue("id")) })
	})
	r.handle("POST /api/models/delete", func(w http.ResponseWriter, req *http.Request) error {
		var in DeleteRequest
		if err := decode(req, &in); err != nil {
			return err
		}
		return reply(w, func() (library.DeleteResult, error) { return s.DeleteModel(in) })
	})
	r.handle("POST /api/hub/search", func(w http.ResponseWriter, req *http.Request) error {
		var q library.SearchQuery
		if err := decode(req, &q); err != nil {
			return err
		}
		return reply(w, func() ([]library.HubModel, error) { return s.SearchHub(q) })
	})
	r.handle("GET /api/hub/starters", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.StarterModels)
	})
	r.handle("GET /api/hub/models/{id}", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, func() (library.HubCard, error) { return s.HubCard(req.PathValue("id")) })
	})
	r.handle("POST /api/models/pull", func(w http.ResponseWriter, req *http.Request) error {
		// The body is the method's argument, a JSON string
		// ("org/repo@rev"); {"repo": ...} is accepted for curl users.
		var raw json.RawMessage
		if err := decode(req, &raw); err != nil {
			return err
		}
		var ref string
		if json.Unmarshal(raw, &ref) != nil {
			var in struct {
				Repo string `json:"repo"`
			}
			if err := json.Unmarshal(raw, &in); err != nil {
				return BadRequest(errors.New(`body must be "org/repo[@revision]"`))
			}
			ref = in.Repo
		}
		return reply(w, func() (Job, error) { return s.PullModel(ref) })
	})
}
