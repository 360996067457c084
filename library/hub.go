package library

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"hark/mlx/safetensors"
	"hark/models/profile"
)

// SearchQuery asks the Hub for models, most downloaded first.
type SearchQuery struct {
	Text string `json:"text"`
	// Kind keeps only chat or speech models ("" for both), by the Hub's
	// pipeline tag.
	Kind profile.Kind `json:"kind,omitempty"`
	// MLX keeps only MLX-format repos (mlx-community and the like).
	MLX bool `json:"mlx,omitempty"`
	// Limit caps the results (0: 30; at most 100).
	Limit int `json:"limit,omitempty"`
}

// HubModel is one search result.
type HubModel struct {
	Repo        string       `json:"repo"`
	PipelineTag string       `json:"pipeline_tag,omitempty"`
	Kind        profile.Kind `json:"kind,omitempty"`
	ModelType   string       `json:"model_type,omitempty"`
	// Supported says a registered family runs this model_type (its
	// quantization or layout may still be refused after the pull).
	Supported    bool     `json:"supported"`
	MLX          bool     `json:"mlx"`
	Gated        bool     `json:"gated"`
	Downloads    int64    `json:"downloads"`
	Likes        int64    `json:"likes"`
	LastModified string   `json:"last_modified,omitempty"`
	Tags         []string `json:"tags,omitempty"`
	// Params is the parameter count the Hub read from the safetensors
	// headers (0 when it has none), and Bytes the weights' size from the
	// same count per dtype: what the fit verdict needs before a pull.
	Params int64 `json:"params,omitempty"`
	Bytes  int64 `json:"bytes,omitempty"`
	// Fit is the app's verdict for this machine ("fits", "tight",
	// "too_big"), from Bytes; empty when unknown.
	Fit string `json:"fit,omitempty"`
}

// HubFile is one file of a repo, with its size.
type HubFile struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// HubCard is what the Library shows of a repo before pulling it.
type HubCard struct {
	HubModel
	Commit string    `json:"commit"`
	Files  []HubFile `json:"files"`
	Size   int64     `json:"size"` // all files
	// Readme is the model card's Markdown, cut at maxReadme bytes.
	Readme string `json:"readme"`
}

// Bounds on what the Hub may send: a search page and a repo listing are
// kilobytes to a few megabytes; a model card is read for display only.
const (
	maxSearchBytes = 16_000_000 // MB as the UI counts them (10^6)
	maxReadme      = 256 << 10
)

// pipeline tags that mean a chat or a speech model.
var kindTags = map[string]profile.Kind{
	"text-generation":              profile.KindChat,
	"image-text-to-text":           profile.KindChat,
	"automatic-speech-recognition": profile.KindSpeech,
}

// hubModelJSON is the Hub's spelling of a model.
type hubModelJSON struct {
	ID           string          `json:"id"`
	ModelID      string          `json:"modelId"`
	PipelineTag  string          `json:"pipeline_tag"`
	LibraryName  string          `json:"library_name"`
	Tags         []string        `json:"tags"`
	Downloads    int64           `json:"downloads"`
	Likes        int64           `json:"likes"`
	LastModified string          `json:"lastModified"`
	Gated        json.RawMessage `json:"gated"` // false, or "auto"/"manual"
	Config       struct {
		ModelType string `json:"model_type"`
	} `json:"config"`
	Safetensors struct {
		Total      int64            `json:"total"`
		Parameters map[string]int64 `json:"parameters"`
	} `json:"safetensors"`
	SHA      string `json:"sha"`
	Siblings []struct {
		RFilename string `json:"rfilename"`
		Size      int64  `json:"size"`
	} `json:"siblings"`
}

func (m hubModelJSON) model() HubModel {
	repo := m.ID
	if repo == "" {
		repo = m.ModelID
	}
	out := HubModel{
		Repo: repo, PipelineTag: m.PipelineTag, Kind: kindTags[m.PipelineTag], ModelType: m.Config.ModelType,
		Downloads: m.Downloads, Likes: m.Likes, LastModified: m.LastModified, Tags: m.Tags,
		Params: m.Safetensors.Total,
		MLX:    m.LibraryName == "mlx" || slices.Contains(m.Tags, "mlx"),
		Gated:  len(m.Gated) > 0 && string(m.Gated) != "false" && string(m.Gated) != "null",
	}
	for dt, n := range m.Safetensors.Parameters {
		// U32 counts MLX-quantized words: their bytes are what is read.
		if size := safetensors.DType(dt).Size(); size > 0 && n > 0 {
			out.Bytes += n * int64(size)
		}
	}
	for _, f := range profile.Families() {
		if out.ModelType != "" && slices.Contains(f.ModelTypes, out.ModelType) {
			out.Supported, out.Kind = true, f.Kind
		}
	}
	return out
}

// Search lists Hub models matching q, most downloaded first. It honours
// HF_ENDPOINT and HF_TOKEN as Pull does.
func (p *Puller) Search(ctx context.Context, q SearchQuery) ([]HubModel, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 30
	}
	limit = min(limit, 100)
	v := url.Values{}
	if s := strings.TrimSpace(q.Text); s != "" {
		v.Set("search", s)
	}
	switch q.Kind {
	case "":
	case profile.KindChat:
		v.Set("pipeline_tag", "text-generation")
	case profile.KindSpeech:
		v.Set("pipeline_tag", "automatic-speech-recognition")
	default:
		return nil, fmt.Errorf("search: kind %q is not chat or speech", q.Kind)
	}
	if q.MLX {
		v.Add("filter", "mlx")
	}
	v.Set("sort", "downloads")
	v.Set("direction", "-1")
	v.Set("limit", strconv.Itoa(limit))
	for _, e := range []string{"pipeline_tag", "library_name", "tags", "downloads", "likes", "lastModified", "gated", "config", "safetensors"} {
		v.Add("expand[]", e)
	}
	var raw []hubModelJSON
	if err := p.getJSON(ctx, p.url("api/models")+"?"+v.Encode(), "search the hub", &raw); err != nil {
		return nil, err
	}
	out := make([]HubModel, 0, len(raw))
	for _, m := range raw {
		hm := m.model()
		if ValidRepoID(hm.Repo) != nil {
			continue // nothing Hark could pull
		}
		out = append(out, hm)
	}
	return out, nil
}

// Card describes repo at its main revision: the files with their sizes and
// the model card, so a user sees what a pull would bring.
func (p *Puller) Card(ctx context.Context, repo string) (HubCard, error) {
	if err := ValidRepoID(repo); err != nil {
		return HubCard{}, err
	}
	var raw hubModelJSON
	if err := p.getJSON(ctx, p.url("api/models", repo)+"?blobs=true", repo, &raw); err != nil {
		return HubCard{}, err
	}
	card := HubCard{HubModel: raw.model(), Commit: strings.ToLower(raw.SHA)}
	if card.Repo == "" {
		card.Repo = repo
	}
	for _, s := range raw.Siblings {
		if checkRemoteName(s.RFilename) != nil {
			continue
		}
		card.Files = append(card.Files, HubFile{Name: s.RFilename, Size: s.Size})
		card.Size += s.Size
	}
	if slices.ContainsFunc(card.Files, func(f HubFile) bool { return f.Name == "README.md" }) {
		rev := "main"
		if IsCommit(card.Commit) {
			rev = card.Commit
		}
		// A card that cannot be read leaves the rest of the answer useful.
		card.Readme, _ = p.getText(ctx, p.url(repo, "resolve", rev, "README.md"), maxReadme)
	}
	return card, nil
}

// getJSON decodes a bounded Hub answer; what names the request in errors.
func (p *Puller) getJSON(ctx context.Context, target, what string, v any) error {
	req, err := p.request(ctx, http.MethodGet, target)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: reach the hub at %s: %w", what, p.endpoint, err)
	}
	defer resp.Body.Close()
	if err := hubStatus(resp, what, "main", p.token != ""); err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBytes+1))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if len(body) > maxSearchBytes {
		return fmt.Errorf("%s: the hub's answer is larger than %d MB", what, maxSearchBytes/1_000_000)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: the hub's answer is not the JSON expected: %w", what, err)
	}
	return nil
}

// getText reads at most limit bytes of a text file; a longer one is cut.
func (p *Puller) getText(ctx context.Context, target string, limit int64) (string, error) {
	req, err := p.request(ctx, http.MethodGet, target)
	if err != nil {
		return "", err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return "", fmt.Errorf("%s: %s", target, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	return string(b), err
}
