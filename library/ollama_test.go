package library

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeOllama lays out an Ollama models folder: a manifest per name/tag and
// the blobs it names (missing, when size is negative).
func writeOllama(t *testing.T, root, rel, manifest string, blobs map[string]int) {
	t.Helper()
	p := filepath.Join(root, "manifests", filepath.FromSlash(rel))
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(manifest), 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "blobs"), 0o755))
	for name, size := range blobs {
		if size >= 0 {
			must(t, os.WriteFile(filepath.Join(root, "blobs", name), make([]byte, size), 0o644))
		}
	}
}

func digest(c byte) string { return strings.Repeat(string(c), 64) }

// Ollama's GGUF models are listed with their sizes and why they do not run.
func TestOllamaModelsListed(t *testing.T) {
	root := t.TempDir()
	man := func(model, tmpl string) string {
		return `{"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:` + model +
			`","size":1000},{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:` + tmpl + `","size":20}]}`
	}
	writeOllama(t, root, "registry.ollama.ai/library/llama3.2/3b", man(digest('a'), digest('b')), map[string]int{"sha256-" + digest('a'): 1000, "sha256-" + digest('b'): 20})
	writeOllama(t, root, "hf.co/someone/tiny-GGUF/latest", man(digest('c'), digest('b')), map[string]int{"sha256-" + digest('c'): -1})
	writeOllama(t, root, "registry.ollama.ai/library/broken/latest", `{"layers":[{"digest":"sha256:../../etc"}]}`, nil)
	writeOllama(t, root, "registry.ollama.ai/library/garbage/latest", `not json`, nil)
	lib := testLib(t, root)
	ms := scanAll(t, lib)
	byID := map[string]Model{}
	for _, m := range ms {
		full, err := lib.Get(context.Background(), m.ID) // with its files
		must(t, err)
		byID[m.ID] = full
	}
	if len(ms) != 4 {
		t.Fatalf("%d models: %+v", len(ms), ms)
	}
	l := byID["ollama:llama3.2:3b"]
	if l.Source != "ollama" || l.Supported || !strings.HasPrefix(l.Reason, "GGUF: not supported yet") || l.Size != 1020 || l.Incomplete || len(l.Files) != 2 || l.Files[0].Name != "model.gguf" {
		t.Errorf("llama3.2:3b: %+v", l)
	}
	h := byID["ollama:hf.co/someone/tiny-GGUF:latest"]
	if !h.Incomplete || h.Files[0].Problem == "" {
		t.Errorf("a missing blob is not Incomplete: %+v", h)
	}
	if b := byID["ollama:broken:latest"]; len(b.Problems) == 0 || !strings.Contains(b.Problems[0], "not a sha256") {
		t.Errorf("broken: %+v", b)
	}
	if g := byID["ollama:garbage:latest"]; len(g.Problems) == 0 || !strings.Contains(g.Problems[0], "manifest") {
		t.Errorf("garbage: %+v", g)
	}
}

func TestOllamaRoot(t *testing.T) {
	home := t.TempDir()
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	if rs := Roots(env, nil); len(rs) != 1 {
		t.Fatalf("roots without Ollama: %+v", rs)
	}
	writeOllama(t, filepath.Join(home, ".ollama", "models"), "registry.ollama.ai/library/x/latest", `{}`, nil)
	rs := Roots(env, nil)
	if len(rs) != 2 || rs[1].Origin != "ollama" || rs[1].Path != filepath.Join(home, ".ollama", "models") {
		t.Fatalf("roots: %+v", rs)
	}
}
