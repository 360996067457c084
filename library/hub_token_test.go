package library

import (
	"context"
	"strings"
	"testing"
)

// Search and the model card go to HF_ENDPOINT with HF_TOKEN, as a pull
// does: a private hub refuses them without it, with a message naming it.
func TestHubSearchAndCardSendToken(t *testing.T) {
	h := newFakeHub(t, "org/private-llama", commitA, pullFiles(t))
	h.private = "s3cret"
	ctx := context.Background()

	anon := NewPuller(PullOptions{Cache: t.TempDir(), Getenv: h.env("")})
	if _, err := anon.Search(ctx, SearchQuery{Text: "llama"}); err == nil || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Errorf("search without a token: %v", err)
	}
	if _, err := anon.Card(ctx, h.repo); err == nil || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Errorf("card without a token: %v", err)
	}

	authed := NewPuller(PullOptions{Cache: t.TempDir(), Getenv: h.env("s3cret")})
	res, err := authed.Search(ctx, SearchQuery{Text: "llama"})
	if err != nil || len(res) != 1 || res[0].Repo != h.repo {
		t.Fatalf("search with the token: %+v %v", res, err)
	}
	card, err := authed.Card(ctx, h.repo)
	if err != nil || card.Commit != commitA || len(card.Files) == 0 {
		t.Fatalf("card with the token: %+v %v", card, err)
	}
}
