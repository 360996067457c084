package app

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"hark/app/transcription"
	"hark/engine"
	"hark/library/store"
)

// A transcript several times longer than the chat model's context (the
// qwen3 family golden, its context cut to 1024 tokens) is summarised
// window by window before the chat opens: the system prompt carries the
// note and a summary that fits beside a question and the reply, and a job
// showed the parts.
func TestAskAboutLongTranscript(t *testing.T) {
	const maxCtx = 1024
	a, _ := chatApp(t, func(cache string) {
		files := tinyChatModel(t)
		var cfg map[string]any
		if err := json.Unmarshal(files["config.json"], &cfg); err != nil {
			t.Fatal(err)
		}
		cfg["max_position_embeddings"] = maxCtx
		files["config.json"], _ = json.Marshal(cfg)
		putSnapshot(t, cache, "test/qwen3-small-context", files)
	})
	s := a.Service
	m := waitChatModel(t, s, "hf:test/qwen3-small-context@"+testCommit)
	if m.ContextLength != maxCtx {
		t.Fatalf("context length %d, want %d", m.ContextLength, maxCtx)
	}

	type seg struct {
		Start float64 `json:"start"`
		End   float64 `json:"end"`
		Text  string  `json:"text"`
	}
	var segs []seg
	for i := 0; i < 200; i++ {
		segs = append(segs, seg{float64(i * 5), float64(i*5 + 5), fmt.Sprintf(" Point %d: we agreed to move the launch by a week and to call the supplier.", i)})
	}
	raw, _ := json.Marshal(segs)
	tr, err := a.DB.SaveTranscript(context.Background(), store.Transcript{SourcePath: "/x/board.wav", SourceName: "board.wav", Model: "m", Language: "en", Segments: raw})
	if err != nil {
		t.Fatal(err)
	}
	full, err := transcription.Prompt(tr)
	if err != nil {
		t.Fatal(err)
	}

	conv, err := s.AskAboutTranscript(tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	note := regexp.MustCompile(`This transcript is longer than the model's context: it was summarised in (\d+) parts first\.`).FindStringSubmatch(conv.SystemPrompt)
	if note == nil {
		t.Fatalf("no note in the system prompt:\n%s", conv.SystemPrompt)
	}
	var parts int
	fmt.Sscan(note[1], &parts)
	if strings.Contains(conv.SystemPrompt, "Point 150:") || !strings.Contains(conv.SystemPrompt, "Part 1: ") || conv.TranscriptID != tr.ID {
		t.Fatalf("system prompt is not the summary:\n%s", conv.SystemPrompt)
	}

	e, err := engine.Load(m.Path, engine.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	n := e.TokenCount(full)
	if n < 3*maxCtx || parts < n/maxCtx {
		t.Fatalf("the transcript takes %d tokens; %d parts for a %d-token context", n, parts, maxCtx)
	}
	reserve := e.ReplyReserve(0)
	f, err := e.FitPrompt(context.Background(), conv.SystemPrompt, []engine.Turn{{Role: "user", Content: "Summarise this transcript: the main points in a few bullet points, with times."}}, reserve, engine.TemplateVars{})
	if err != nil || len(f.IDs)+reserve > maxCtx {
		t.Fatalf("the final prompt does not fit: %d ids + %d reserve (%v)", len(f.IDs), reserve, err)
	}

	var job *Job
	for _, j := range a.Jobs.List() {
		if j.Kind == "summarise" {
			job = &j
		}
	}
	if job == nil || job.State != "done" || job.Done < 1 {
		t.Fatalf("summarise job: %+v", job)
	}
	t.Logf("%d tokens → %d parts → a %d-token prompt", n, parts, len(f.IDs))
}
