package app

import (
	"context"
	"fmt"
	"strings"

	"hark/app/transcription"
	"hark/engine"
	"hark/library/store"
)

// condensedNote is the line a conversation about a long transcript starts
// with; the attachment card shows it (TranscriptCard.svelte matches it).
const condensedNote = "This transcript is longer than the model's context: it was summarised in %d parts first."

// condenseInstruction is the system prompt for summarising one window.
const condenseInstruction = "You summarise one part of a transcript of a recording. Write the main points of this part in a few short sentences, " +
	"keeping the times [m:ss] of the points you note. Write only the summary."

// fitTranscript returns the system prompt for a chat about t on model:
// the whole timed transcript when it fits the model's context beside a
// question and the reply, else a summary made window by window (see
// engine.Condense), headed by a note saying so. Summarising runs as a job,
// so the Activity panel shows its parts and can cancel it.
func (s *Service) fitTranscript(t store.Transcript, model, prompt string) (string, error) {
	ms, err := s.ListChatModels()
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		// A token is at least one byte: a prompt with fewer bytes than
		// the context has room for (beside the template's own text, the
		// reply and a question) fits without loading the model.
		if m.ID == model && m.ContextLength > 0 && len(prompt)+2*1024+questionRoom <= m.ContextLength {
			return prompt, nil
		}
	}
	type result struct {
		prompt string
		err    error
	}
	done := make(chan result, 1)
	s.app.Jobs.Start("summarise", "Reading "+t.SourceName+" in parts", "parts", func(ctx context.Context, progress Progress) (any, error) {
		p, err := s.condenseTranscript(ctx, t, model, prompt, progress)
		done <- result{p, err}
		return nil, err
	})
	r := <-done
	return r.prompt, r.err
}

// questionRoom is the tokens kept free for the user's question.
const questionRoom = 256

func (s *Service) condenseTranscript(ctx context.Context, t store.Transcript, model, prompt string, progress Progress) (string, error) {
	// Checked for the KV cache the conversation will keep (Settings').
	lease, err := s.app.chats.Engine(ctx, model, s.app.newChatKV())
	if err != nil {
		// The chat says why on the first message, as for any model.
		s.app.Log.Warn("transcript: cannot measure against the model", "model", model, "err", err)
		return prompt, nil
	}
	defer lease.Release()
	e := lease.Engine
	reserve := e.ReplyReserve(0)
	question := []engine.Turn{{Role: "user", Content: strings.Repeat("word ", questionRoom/2)}}
	if _, err := e.FitPrompt(ctx, prompt, question, reserve, engine.TemplateVars{}); err == nil {
		return prompt, nil
	}
	lines, err := transcription.Lines(t)
	if err != nil {
		return "", err
	}
	maxCtx := e.Model.Info().MaxContext
	target := maxCtx - reserve - questionRoom - e.TokenCount(condensedPrompt(t, 999, "")) - 32
	if target < 64 {
		return "", BadRequest(fmt.Errorf("model %s reads at most %d tokens, too few to summarise this transcript into; choose a model with a longer context", model, maxCtx))
	}
	s.app.Log.Info("transcript: longer than the context, summarising", "transcript", t.ID, "model", model, "context", maxCtx, "lines", len(lines))
	c, err := e.Condense(ctx, engine.CondenseRequest{
		Instruction: condenseInstruction,
		Header:      fmt.Sprintf("Transcript of %q.\n", t.SourceName),
		Lines:       lines,
		Target:      target,
		Options:     engine.Options{Sampling: engine.Sampling{Temperature: 0}},
	}, func(round, part, parts int) {
		progress(int64(part), int64(parts), fmt.Sprintf("round %d: part %d of %d", round, part, parts))
	})
	if err != nil {
		return "", fmt.Errorf("summarise the transcript of %s: %w", t.SourceName, err)
	}
	return condensedPrompt(t, c.Parts, c.Text), nil
}

// condensedPrompt frames a transcript's summary for the chat model.
func condensedPrompt(t store.Transcript, parts int, summary string) string {
	return transcription.Frame(t) + fmt.Sprintf(condensedNote, parts) +
		" Answer from the summary below; cite its times as [m:ss] when it helps, and say so when it does not contain the answer.\n\nSummary of the transcript, part by part:\n" +
		summary + "\n"
}
