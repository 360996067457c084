package library

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// hubListing is what the fake hub's search knows: its own repo (an MLX
// llama) plus a Whisper model and an unsupported chat model.
func (h *fakeHub) hubListing() []map[string]any {
	return []map[string]any{
		{"id": h.repo, "pipeline_tag": "text-generation", "library_name": "mlx", "tags": []string{"mlx", "llama"},
			"downloads": 500, "likes": 7, "config": map[string]any{"model_type": "llama"}, "safetensors": map[string]any{"total": 8192, "parameters": map[string]any{"U32": 1024, "F16": 4096}}},
		{"id": "openai/whisper-tiny", "pipeline_tag": "automatic-speech-recognition", "library_name": "transformers",
			"downloads": 900, "config": map[string]any{"model_type": "whisper"}, "gated": false},
		{"id": "odd/thing", "pipeline_tag": "text-generation", "library_name": "transformers", "downloads": 10,
			"config": map[string]any{"model_type": "brand_new_arch"}, "gated": "manual"},
		{"id": "../escape", "pipeline_tag": "text-generation", "downloads": 1},
	}
}

// serveSearch answers /api/models (search, pipeline_tag, filter=mlx, sort
// by downloads, limit) and /api/models/REPO?blobs=true, as the Hub does.
func (h *fakeHub) serveSearch(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	switch {
	case r.URL.Path == "/api/models":
		if q.Get("sort") != "downloads" || q.Get("direction") != "-1" {
			http.Error(w, "unexpected sort", http.StatusBadRequest)
			return true
		}
		var out []map[string]any
		for _, m := range h.hubListing() {
			if s := q.Get("search"); s != "" && !strings.Contains(strings.ToLower(m["id"].(string)), strings.ToLower(s)) {
				continue
			}
			if p := q.Get("pipeline_tag"); p != "" && m["pipeline_tag"] != p {
				continue
			}
			if q.Get("filter") == "mlx" && m["library_name"] != "mlx" {
				continue
			}
			out = append(out, m)
		}
		slices.SortFunc(out, func(a, b map[string]any) int { return b["downloads"].(int) - a["downloads"].(int) })
		json.NewEncoder(w).Encode(out)
		return true
	case r.URL.Path == "/api/models/"+h.repo && q.Get("blobs") == "true":
		var sib []map[string]any
		for name, b := range h.files {
			sib = append(sib, map[string]any{"rfilename": name, "size": len(b)})
		}
		sib = append(sib, map[string]any{"rfilename": "../../etc/passwd", "size": 1})
		m := h.hubListing()[0]
		m["sha"], m["siblings"] = h.commit, sib
		json.NewEncoder(w).Encode(m)
		return true
	}
	return false
}

func TestHubSearch(t *testing.T) {
	h := newFakeHub(t, "mlx-community/tiny-llama-4bit", commitA, pullFiles(t))
	p := NewPuller(PullOptions{Cache: t.TempDir(), Getenv: h.env("")})
	ctx := context.Background()

	all, err := p.Search(ctx, SearchQuery{})
	must(t, err)
	var repos []string
	for _, m := range all {
		repos = append(repos, m.Repo)
	}
	// Most downloaded first; a name Hark could never pull is dropped.
	if want := []string{"openai/whisper-tiny", h.repo, "odd/thing"}; !slices.Equal(repos, want) {
		t.Fatalf("repos %v, want %v", repos, want)
	}
	llama, whisper, odd := all[1], all[0], all[2]
	if !llama.MLX || !llama.Supported || llama.Kind != "chat" || llama.Params != 8192 || llama.ModelType != "llama" || llama.Bytes != 1024*4+4096*2 {
		t.Errorf("llama: %+v", llama)
	}
	if whisper.MLX || !whisper.Supported || whisper.Kind != "speech" || whisper.Gated {
		t.Errorf("whisper: %+v", whisper)
	}
	if odd.Supported || !odd.Gated || odd.Kind != "chat" {
		t.Errorf("odd: %+v", odd)
	}

	speech, err := p.Search(ctx, SearchQuery{Kind: "speech"})
	must(t, err)
	if len(speech) != 1 || speech[0].Repo != "openai/whisper-tiny" {
		t.Errorf("speech: %+v", speech)
	}
	mlxChat, err := p.Search(ctx, SearchQuery{Text: "LLAMA", Kind: "chat", MLX: true})
	must(t, err)
	if len(mlxChat) != 1 || mlxChat[0].Repo != h.repo {
		t.Errorf("mlx chat: %+v", mlxChat)
	}
	if _, err := p.Search(ctx, SearchQuery{Kind: "vision"}); err == nil || !strings.Contains(err.Error(), "vision") {
		t.Errorf("bad kind: %v", err)
	}
}

func TestHubCard(t *testing.T) {
	files := pullFiles(t)
	files["README.md"] = []byte("# Tiny llama\n\nA card.")
	h := newFakeHub(t, "mlx-community/tiny-llama-4bit", commitA, files)
	p := NewPuller(PullOptions{Cache: t.TempDir(), Getenv: h.env("")})
	card, err := p.Card(context.Background(), h.repo)
	must(t, err)
	var size int64
	for _, b := range files {
		size += int64(len(b))
	}
	if card.Commit != commitA || len(card.Files) != len(files) || card.Size != size {
		t.Fatalf("card: commit %s, %d files, %d bytes; want %d files, %d bytes", card.Commit, len(card.Files), card.Size, len(files), size)
	}
	if card.Readme != string(files["README.md"]) {
		t.Errorf("readme %q", card.Readme)
	}
	if _, err := p.Card(context.Background(), "no-slash"); err == nil {
		t.Error("a bad repo id was asked for")
	}
	if _, err := p.Card(context.Background(), "other/repo"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing repo: %v", err)
	}
}

// A hub that answers garbage, or too much, gets a clear error.
func TestHubSearchBadAnswers(t *testing.T) {
	for name, body := range map[string]string{
		"not json":    "<html>rate limited</html>",
		"wrong shape": `{"error":"x"}`,
		"too large":   "[" + strings.Repeat(" ", maxSearchBytes+1) + "]",
	} {
		t.Run(name, func(t *testing.T) {
			srv := newStaticServer(t, body)
			p := NewPuller(PullOptions{Cache: t.TempDir(), Getenv: func(k string) string {
				if k == "HF_ENDPOINT" {
					return srv
				}
				return ""
			}})
			_, err := p.Search(context.Background(), SearchQuery{Text: "x"})
			if err == nil || !strings.Contains(err.Error(), "search the hub") {
				t.Fatalf("err %v", err)
			}
		})
	}
}

// newStaticServer answers every request with body.
func newStaticServer(t *testing.T, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
