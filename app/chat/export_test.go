package chat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"hark/library/store"
)

func TestExportMarkdown(t *testing.T) {
	c := store.Conversation{Title: "A\nB", Model: "hf:o/r@1", SystemPrompt: "# be nice\nok", CreatedAt: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}
	stopped, _ := json.Marshal(Stats{Stopped: true})
	msgs := []store.Message{
		{Role: "user", Content: "Hi *there*"},
		{Role: "assistant", Content: "```go\nx := 1\n```\n", Stats: stopped},
	}
	got := exportMarkdown(c, msgs)
	want := "# A B\n\n- Model: `hf:o/r@1`\n- Started: 2026-01-02 03:04 UTC\n\n## System prompt\n\n> # be nice\n> ok\n" +
		"\n## You\n\nHi *there*\n\n## Assistant\n\n```go\nx := 1\n```\n\n*(stopped)*\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTitleFrom(t *testing.T) {
	if got := titleFrom("  Tell me\n about   ducks "); got != "Tell me about ducks" {
		t.Errorf("%q", got)
	}
	long := strings.Repeat("word ", 30)
	if got := titleFrom(long); len([]rune(got)) > 49 || !strings.HasSuffix(got, "…") {
		t.Errorf("%q", got)
	}
}
