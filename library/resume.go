package library

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// ResumeRef is what to pull to finish a snapshot that is Incomplete: its
// repo at its own commit (not a branch that may have moved since).
func ResumeRef(m Model) (string, error) {
	if m.Source != "hf" || m.Repo == "" || !IsCommit(m.Commit) {
		return "", fmt.Errorf("%s was not downloaded from the Hugging Face Hub, so there is no download to resume; copy its missing files into %s", m.ID, m.Path)
	}
	return m.Repo + "@" + m.Commit, nil
}

// Resumable reports whether the Resume action applies to m: a hub
// snapshot that is Incomplete and that no download is filling right now.
func Resumable(m Model) bool {
	_, err := ResumeRef(m)
	return err == nil && m.Incomplete && !m.Downloading
}

// Reachable asks the hub's endpoint for any answer within timeout: any
// HTTP status means it is there (the Hub answers its root without a
// token); no answer says why.
func (p *Puller) Reachable(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := p.request(ctx, http.MethodHead, p.url(""))
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("the hub at %s does not answer: %w", p.endpoint, err)
	}
	resp.Body.Close()
	return nil
}

// Endpoint is the hub's address (HF_ENDPOINT or huggingface.co).
func (p *Puller) Endpoint() string { return p.endpoint.String() }
