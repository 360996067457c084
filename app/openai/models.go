package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"hark/library"
	"hark/models/profile"
)

// modelObject is OpenAI's model object, with Hark's kind as an extension.
type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	Kind    string `json:"kind"`
	// Fingerprint is set on an alias, naming the model it stands for.
	AliasOf string `json:"alias_of,omitempty"`
}

func (s *server) library() (Library, error) {
	var lib Library
	if s.Library != nil {
		lib = s.Library()
	}
	if lib == nil {
		return nil, &Error{Status: 503, Message: "the model library is not running", Type: typeServer}
	}
	return lib, nil
}

// usable reports whether m can be served now.
func usable(m library.Model) bool {
	return (m.Kind == profile.KindChat || m.Kind == profile.KindSpeech) && m.Supported && !m.Incomplete && !m.Downloading
}

// listModels lists the chat and speech models by ID (the fingerprint for
// a Hugging Face snapshot), then each org/repo once as an alias of the
// snapshot it resolves to.
func (s *server) listModels(w http.ResponseWriter, r *http.Request) error {
	lib, err := s.library()
	if err != nil {
		return err
	}
	ms, err := lib.List(r.Context())
	if err != nil {
		return err
	}
	data := []modelObject{}
	aliases := map[string]bool{}
	for _, m := range ms {
		if usable(m) {
			data = append(data, object(m, m.ID, ""))
		}
	}
	for _, m := range ms {
		if !usable(m) || m.Source != "hf" || m.Repo == "" || aliases[m.Repo] {
			continue
		}
		aliases[m.Repo] = true
		if target, err := lib.Resolve(r.Context(), m.Repo); err == nil && usable(target) {
			data = append(data, object(target, m.Repo, target.ID))
		}
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data})
	return nil
}

func object(m library.Model, id, aliasOf string) modelObject {
	owner := "hark"
	if m.Repo != "" && m.Source == "hf" {
		if org, _, ok := strings.Cut(m.Repo, "/"); ok {
			owner = org
		}
	}
	return modelObject{ID: id, Object: "model", Created: m.Modified.Unix(), OwnedBy: owner, Kind: string(m.Kind), AliasOf: aliasOf}
}

func (s *server) getModel(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("model")
	m, err := s.resolve(r.Context(), id, "")
	if err != nil {
		return err
	}
	aliasOf := ""
	if id != m.ID {
		aliasOf = m.ID
	}
	writeJSON(w, 200, object(m, id, aliasOf))
	return nil
}

// resolve finds a usable model of kind ("" for any) named id: a 404 when
// there is none, a 400 when it is of the wrong kind or cannot run.
func (s *server) resolve(ctx context.Context, id string, kind profile.Kind) (library.Model, error) {
	if id == "" {
		return library.Model{}, &Error{Status: 400, Message: "model is required: name one from GET /v1/models", Type: typeInvalid, Param: "model", Code: "missing_required_parameter"}
	}
	lib, err := s.library()
	if err != nil {
		return library.Model{}, err
	}
	m, err := lib.Resolve(ctx, id)
	if errors.Is(err, library.ErrNotFound) {
		return m, &Error{Status: 404, Message: fmt.Sprintf("the model %q does not exist in Hark's library; GET /v1/models lists the models you can use", id), Type: typeInvalid, Param: "model", Code: "model_not_found"}
	}
	if err != nil {
		return m, err
	}
	switch {
	case kind != "" && m.Kind != kind:
		what := "a chat completion endpoint"
		if kind == profile.KindSpeech {
			what = "the audio endpoints"
		}
		return m, badParam("model", "%s is a %s model, which %s cannot use", id, m.Kind, what)
	case !m.Supported:
		return m, badParam("model", "%s cannot run in Hark: %s", id, m.Reason)
	case m.Incomplete || m.Downloading:
		return m, badParam("model", "%s is incomplete on disk (still downloading?)", id)
	}
	if _, err := os.Stat(filepath.Join(m.Path, "config.json")); err != nil {
		return m, &Error{Status: 404, Message: fmt.Sprintf("the files of %s were removed from %s", id, m.Path), Type: typeInvalid, Param: "model", Code: "model_not_found"}
	}
	return m, nil
}
