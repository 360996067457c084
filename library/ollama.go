package library

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"hark/models/profile"
)

// Ollama keeps its models as GGUF blobs behind manifests:
// MODELS/manifests/REGISTRY/NAMESPACE/NAME/TAG is a JSON list of layers,
// MODELS/blobs/sha256-HEX their data. Hark cannot run GGUF yet; it lists
// each model with its size and says so, so Ollama users see why.

// OllamaModels is Ollama's models folder: OLLAMA_MODELS, else
// ~/.ollama/models.
func OllamaModels(getenv func(string) string) string {
	if d := getenv("OLLAMA_MODELS"); d != "" {
		return expandHome(d, getenv)
	}
	return filepath.Join(homeDir(getenv), ".ollama", "models")
}

// isOllamaStore reports whether root is laid out as Ollama's models folder.
func isOllamaStore(root string) bool {
	return isDir(filepath.Join(root, "manifests")) && isDir(filepath.Join(root, "blobs"))
}

// maxManifestBytes bounds a manifest read: real ones are under 2 KB.
const maxManifestBytes = 1 << 20

// ollamaModelLayer is the media type of the GGUF weights layer.
const ollamaModelLayer = "application/vnd.ollama.image.model"

const ollamaReason = "GGUF: not supported yet (Ollama keeps its models as GGUF files; Hark runs safetensors models with a config.json)"

type ollamaManifest struct {
	Layers []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Size      int64  `json:"size"`
	} `json:"layers"`
}

// scanOllama lists the models of the manifests folder unit of root.
func scanOllama(root, unit string) []Model {
	var out []Model
	// registry/namespace/name/tag: four levels below manifests.
	filepath.WalkDir(unit, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder hides only what is in it
		}
		rel, _ := filepath.Rel(unit, path)
		depth := len(strings.Split(rel, string(filepath.Separator)))
		if d.IsDir() {
			if rel != "." && depth >= 4 {
				return fs.SkipDir
			}
			return nil
		}
		if depth == 4 && d.Type().IsRegular() {
			out = append(out, scanOllamaManifest(root, unit, path, filepath.ToSlash(rel)))
		}
		return nil
	})
	return out
}

func scanOllamaManifest(root, unit, path, rel string) Model {
	m := Model{Path: path, Source: "ollama", Root: root, Unit: unit, Refs: []string{}, Architectures: []string{},
		Kind: profile.KindOther, Reason: ollamaReason, Problems: []string{}, Files: []File{}}
	parts := strings.Split(rel, "/") // registry, namespace, name, tag
	name := parts[2] + ":" + parts[3]
	if parts[0] != "registry.ollama.ai" || parts[1] != "library" {
		name = parts[0] + "/" + parts[1] + "/" + name
	}
	m.Repo, m.ID = name, "ollama:"+name
	if st, err := os.Stat(path); err == nil {
		m.Modified = st.ModTime()
	}
	b, err := readLimited(path, maxManifestBytes)
	var man ollamaManifest
	if err == nil {
		err = json.Unmarshal(b, &man)
	}
	if err != nil {
		m.Problems = append(m.Problems, "manifest: "+describeErr(err))
		return m
	}
	for _, l := range man.Layers {
		hexd, ok := strings.CutPrefix(l.Digest, "sha256:")
		if !ok || len(hexd) != 64 || strings.ContainsAny(hexd, "/\\.") {
			m.Problems = append(m.Problems, fmt.Sprintf("layer digest %q is not a sha256", l.Digest))
			continue
		}
		blob := "sha256-" + hexd
		f := File{Name: layerName(l.MediaType), Size: l.Size, Blob: blob}
		if st, err := os.Stat(filepath.Join(root, "blobs", blob)); err != nil {
			f.Problem = "blob " + blob + ": " + describeErr(err)
			m.Incomplete = true
		} else {
			f.Size = st.Size()
		}
		m.Files = append(m.Files, f)
		m.Size += f.Size
		if l.MediaType == ollamaModelLayer {
			m.ContentID = hexd[:16]
			m.DType = "gguf"
		}
	}
	m.FileCount = len(m.Files)
	return m
}

// layerName is the file name a layer is listed under: model.gguf for the
// weights, else the media type's last word (template, params, license...).
func layerName(mediaType string) string {
	if mediaType == ollamaModelLayer {
		return "model.gguf"
	}
	if i := strings.LastIndexByte(mediaType, '.'); i >= 0 {
		return mediaType[i+1:]
	}
	return mediaType
}
