package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

// A transcript several times stories260K's 512-token context is split
// into windows that each fit, cover every line once and in order, and is
// summarised (round after round) into a text whose final prompt fits.
func TestCondenseLongText(t *testing.T) {
	e, err := Load(mlxtest.Assets(t, "models", "stories260K", "hf"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	maxCtx := e.Model.Info().MaxContext
	if maxCtx != 512 {
		t.Fatalf("context %d, want 512", maxCtx)
	}
	var lines []string
	for i := 0; i < 120; i++ {
		lines = append(lines, fmt.Sprintf("[%d:%02d] Line %d: the little dog ran to the park and saw a big red ball.", i/6, i%6*10, i))
	}
	// One line longer than any window: cut at spaces, nothing lost.
	lines[70] = strings.Repeat("the cat sat on the mat and ", 90) + "END"
	instr := "Summarise this part of a transcript."
	if n := e.TokenCount(strings.Join(lines, "\n")); n < 4*maxCtx {
		t.Fatalf("the text takes %d tokens, want several contexts", n)
	}

	reserve := e.ReplyReserve(0)
	ws, err := e.Windows(ctx, instr, "Transcript:\n", lines, reserve)
	if err != nil {
		t.Fatal(err)
	}
	checkWindows(t, e, instr, "Transcript:\n", lines, ws, reserve)

	target := maxCtx - reserve - 64 // room for the framing and a question
	c, err := e.Condense(ctx, CondenseRequest{Instruction: instr, Header: "Transcript:\n", Lines: lines, Target: target}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkWindows(t, e, instr, "Transcript:\n", lines, c.Windows, reserve+8)
	if c.Parts < 4 || c.Parts != len(c.Windows) || c.Rounds < 1 {
		t.Fatalf("%d parts in %d rounds", c.Parts, c.Rounds)
	}
	if n := e.TokenCount(c.Text); n > target || n == 0 {
		t.Fatalf("condensed to %d tokens, target %d", n, target)
	}
	f, err := e.FitPrompt(ctx, "Answer from this summary of a transcript.\n"+c.Text, []Turn{{"user", "What happened?"}}, reserve, TemplateVars{})
	if err != nil || f.Trimmed != 0 || len(f.IDs)+reserve > maxCtx {
		t.Fatalf("final prompt: %d ids, trimmed %d, %v", len(f.IDs), f.Trimmed, err)
	}
	t.Logf("%d lines → %d parts, %d rounds, %d tokens", len(lines), c.Parts, c.Rounds, e.TokenCount(c.Text))

	// A text that already fits is returned as it is.
	short, err := e.Condense(ctx, CondenseRequest{Instruction: instr, Lines: lines[:3], Target: target}, nil)
	if err != nil || short.Parts != 0 || short.Text != strings.Join(lines[:3], "\n") {
		t.Fatalf("short text: %+v %v", short, err)
	}
}

// checkWindows: every window fits with reserve spare, and the windows,
// joined, are the lines in order (a cut line's pieces rejoin to it).
func checkWindows(t *testing.T, e *Engine, instr, header string, lines []string, ws [][]string, reserve int) {
	t.Helper()
	maxCtx := e.Model.Info().MaxContext
	var got []string
	for i, w := range ws {
		if len(w) == 0 {
			t.Fatalf("window %d is empty", i)
		}
		ids, err := e.renderTurns(context.Background(), instr, []Turn{{"user", header + strings.Join(w, "\n")}}, TemplateVars{})
		if err != nil || len(ids)+reserve > maxCtx {
			t.Fatalf("window %d: %d tokens + %d reserve > %d (%v)", i, len(ids), reserve, maxCtx, err)
		}
		got = append(got, w...)
	}
	want := strings.Fields(strings.Join(lines, " "))
	if have := strings.Fields(strings.Join(got, " ")); !slices.Equal(have, want) {
		t.Fatalf("the windows do not rejoin to the text in order (%d words, want %d)", len(have), len(want))
	}
	if len(got) <= len(lines) {
		t.Fatalf("the over-long line was not cut: %d pieces for %d lines", len(got), len(lines))
	}
	// Order: each original line's first piece comes after the previous one's.
	at := 0
	for i, l := range lines {
		first := strings.Fields(l)[0] + " " + strings.Fields(l)[1]
		for at < len(got) && !strings.HasPrefix(got[at], first) {
			at++
		}
		if at == len(got) {
			t.Fatalf("line %d not found in order", i)
		}
	}
}
