package library

import (
	"os"
	"path/filepath"
	"strings"
)

// Root is one folder the library scans.
type Root struct {
	Path string `json:"path"`
	// Origin says where the root came from: "HF_HUB_CACHE", "HF_HOME",
	// "default", "lmstudio", "ollama" or "settings".
	Origin string `json:"origin"`
}

// HFCache returns the Hugging Face hub cache folder the way
// huggingface_hub chooses it: HF_HUB_CACHE, else HF_HOME/hub, else
// ~/.cache/huggingface/hub (XDG_CACHE_HOME is honoured like the Python
// library does).
func HFCache(getenv func(string) string) Root {
	if d := getenv("HF_HUB_CACHE"); d != "" {
		return Root{Path: expandHome(d, getenv), Origin: "HF_HUB_CACHE"}
	}
	if d := getenv("HF_HOME"); d != "" {
		return Root{Path: filepath.Join(expandHome(d, getenv), "hub"), Origin: "HF_HOME"}
	}
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(homeDir(getenv), ".cache")
	}
	return Root{Path: filepath.Join(expandHome(cache, getenv), "huggingface", "hub"), Origin: "default"}
}

// Roots is the HF cache, LM Studio's and Ollama's models folders when they
// exist (read in place, like the cache), then the extra roots from
// Settings, with duplicates (after cleaning) dropped.
func Roots(getenv func(string) string, extra []string) []Root {
	out := []Root{HFCache(getenv)}
	if lms := LMStudioModels(getenv); isDir(lms) && lms != out[0].Path {
		out = append(out, Root{Path: lms, Origin: "lmstudio"})
	}
	if ol := OllamaModels(getenv); isOllamaStore(ol) {
		out = append(out, Root{Path: ol, Origin: "ollama"})
	}
	seen := map[string]bool{}
	for _, r := range out {
		seen[r.Path] = true
	}
	for _, e := range extra {
		p := filepath.Clean(expandHome(strings.TrimSpace(e), getenv))
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, Root{Path: p, Origin: "settings"})
	}
	return out
}

// LMStudioModels is LM Studio's models folder: org/repo folders of MLX
// safetensors and GGUF files, which most of its users' models are in.
func LMStudioModels(getenv func(string) string) string {
	return filepath.Join(homeDir(getenv), ".lmstudio", "models")
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// homeDir is HOME, else the OS's idea of the user's home.
func homeDir(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

func expandHome(p string, getenv func(string) string) string {
	if p == "~" {
		return homeDir(getenv)
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(homeDir(getenv), rest)
	}
	return p
}
