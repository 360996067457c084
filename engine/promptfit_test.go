package engine

import (
	"context"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

// A thread longer than stories260K's 512-token context loses its oldest
// exchanges, whole, and keeps the latest turn; one turn too long alone is
// refused with the figures.
func TestFitPromptTrimsOldestTurns(t *testing.T) {
	e, err := Load(mlxtest.Assets(t, "models", "stories260K", "hf"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	long := strings.Repeat("Once upon a time there was a dog. ", 12) // ~110 tokens
	var turns []Turn
	for i := 0; i < 8; i++ {
		turns = append(turns, Turn{"user", long}, Turn{"assistant", long})
	}
	turns = append(turns, Turn{"user", "The end."})
	reserve := e.ReplyReserve(0)
	if reserve != 128 {
		t.Fatalf("reserve %d, want a quarter of 512", reserve)
	}
	f, err := e.FitPrompt(ctx, "Be kind.", turns, reserve, TemplateVars{})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Completion || f.Trimmed == 0 || f.Trimmed%2 != 0 || len(f.IDs)+reserve > 512 {
		t.Fatalf("fitted %d ids, trimmed %d, completion %v", len(f.IDs), f.Trimmed, f.Completion)
	}
	// One turn fewer trimmed would not have fitted.
	more, _ := e.renderTurns(ctx, "Be kind.", turns[f.Trimmed-2:], TemplateVars{})
	if len(more)+reserve <= 512 {
		t.Fatalf("trimmed %d turns, but %d fewer fit (%d ids)", f.Trimmed, 2, len(more))
	}
	if text := e.Tokenizer.Decode(f.IDs, true); !strings.HasPrefix(text, "Be kind.") || !strings.HasSuffix(text, "The end.") {
		t.Fatalf("the system prompt or the last turn was lost: %q", text)
	}
	_, err = e.FitPrompt(ctx, "", []Turn{{"user", strings.Repeat(long, 5)}}, reserve, TemplateVars{})
	if err == nil || !strings.Contains(err.Error(), "reads at most 512") {
		t.Fatalf("too long alone: %v", err)
	}
	if _, err := e.FitPrompt(ctx, "", nil, 0, TemplateVars{}); err == nil {
		t.Fatal("an empty thread was fitted")
	}
}
