package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// A text longer than the context (a long transcript) cannot go into one
// prompt, and trimming old turns does not help when the text is the system
// prompt. Condense summarises it window by window, in order, and merges
// the summaries (summarising them again while they are still too long),
// so the answer is built from the whole text rather than its tail.

// CondenseRequest is a text to shorten, as lines kept whole where they fit.
type CondenseRequest struct {
	// Instruction is the system prompt for each window; Header comes
	// before the window's lines in its user turn ("Part 2 of 5" is added).
	Instruction, Header string
	Lines               []string
	// Target is how many tokens the result may take (counted as plain
	// text); 0 means half the context.
	Target int
	// Options drive each summary; MaxTokens is its length (default and
	// cap: ReplyReserve(0), and half the target).
	Options Options
}

// Condensed is the result: Text fits the target.
type Condensed struct {
	Text string
	// Windows are the first round's windows of lines: consecutive, in
	// order, together the whole text. Parts is how many there were.
	Windows [][]string
	Parts   int
	Rounds  int
}

// TokenCount is the number of tokens text takes as plain text (no BOS).
func (e *Engine) TokenCount(text string) int { return len(e.Tokenizer.Encode(text, false)) }

// Windows splits lines, keeping their order, into consecutive windows
// each of which, as the one user turn (header, then the lines) after
// system, fits the context with reserve tokens to spare. A line too long
// for any window is cut at spaces first.
func (e *Engine) Windows(ctx context.Context, system, header string, lines []string, reserve int) ([][]string, error) {
	maxCtx := e.Model.Info().MaxContext
	if maxCtx <= 0 {
		return [][]string{lines}, nil
	}
	render := func(window []string) (int, error) {
		ids, err := e.renderTurns(ctx, system, []Turn{{"user", header + strings.Join(window, "\n")}}, TemplateVars{})
		return len(ids), err
	}
	base, err := render(nil)
	if err != nil {
		return nil, err
	}
	budget := maxCtx - reserve - base
	if budget < 16 {
		return nil, fmt.Errorf("the context (%d tokens) has no room for a window: the instruction takes %d and the summary %d", maxCtx, base, reserve)
	}
	// Cut lines longer than a window into pieces that fit alone.
	var pieces []string
	var costs []int
	for _, l := range lines {
		for _, p := range cutLine(e, l, budget*3/4) {
			pieces = append(pieces, p)
			costs = append(costs, e.TokenCount(p+"\n"))
		}
	}
	var out [][]string
	for i := 0; i < len(pieces); {
		// Fill by the per-line estimate, then confirm with the real
		// prompt and give lines back while it does not fit (tokens can
		// merge across a line break).
		j, used := i, 0
		for j < len(pieces) && (j == i || used+costs[j] <= budget) {
			used += costs[j]
			j++
		}
		for {
			n, err := render(pieces[i:j])
			if err != nil {
				return nil, err
			}
			if n+reserve <= maxCtx {
				break
			}
			if j-i == 1 {
				return nil, fmt.Errorf("line %q is too long for the context even alone (%d tokens)", pieces[i], n)
			}
			j--
		}
		out = append(out, pieces[i:j])
		i = j
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cutLine splits a line at spaces into pieces of at most max tokens
// (a single over-long word stays whole; the window check then says so).
func cutLine(e *Engine, line string, max int) []string {
	if e.TokenCount(line) <= max {
		return []string{line}
	}
	words := strings.Fields(line)
	if len(words) < 2 {
		return []string{line}
	}
	half := len(words) / 2
	return append(cutLine(e, strings.Join(words[:half], " "), max), cutLine(e, strings.Join(words[half:], " "), max)...)
}

// Condense summarises req.Lines window by window and merges the summaries
// until the result fits req.Target tokens. onPart, if set, hears each
// summary as it is made (round, part, parts).
func (e *Engine) Condense(ctx context.Context, req CondenseRequest, onPart func(round, part, parts int)) (Condensed, error) {
	var c Condensed
	maxCtx := e.Model.Info().MaxContext
	target := req.Target
	if target <= 0 {
		target = maxCtx / 2
	}
	// A summary may take half the target at most, so that one round
	// always ends with something that fits.
	reserve := min(e.ReplyReserve(0), max(target/2, 1))
	if req.Options.MaxTokens > 0 && req.Options.MaxTokens < reserve {
		reserve = req.Options.MaxTokens
	}
	opt := req.Options
	opt.MaxTokens = reserve
	lines := req.Lines
	if len(lines) == 0 {
		return c, errors.New("nothing to condense: the text is empty")
	}
	prev := 0
	for round := 1; ; round++ {
		text := strings.Join(lines, "\n")
		n := e.TokenCount(text)
		if n <= target || maxCtx <= 0 {
			c.Text, c.Rounds = text, round-1
			return c, nil
		}
		// Each round must shrink the text, or it would never end (a
		// model that repeats itself up to its length cap).
		if round > 1 && n >= prev {
			return c, fmt.Errorf("summarising did not shorten the text (%d tokens after round %d, %d before); the model's context (%d) is too small for this text", n, round-1, prev, maxCtx)
		}
		prev = n
		// Measured with the widest part label, and a few tokens spare.
		windows, err := e.Windows(ctx, req.Instruction, req.Header+"Part 999 of 999:\n", lines, reserve+8)
		if err != nil {
			return c, err
		}
		if round == 1 {
			c.Windows, c.Parts = windows, len(windows)
		}
		summaries := make([]string, 0, len(windows))
		for i, w := range windows {
			head := fmt.Sprintf("%sPart %d of %d:\n", req.Header, i+1, len(windows))
			f, err := e.FitPrompt(ctx, req.Instruction, []Turn{{"user", head + strings.Join(w, "\n")}}, reserve, TemplateVars{})
			if err != nil {
				return c, fmt.Errorf("part %d of %d: %w", i+1, len(windows), err)
			}
			r, err := e.Generate(ctx, f.IDs, opt, nil)
			if err != nil {
				return c, fmt.Errorf("summarise part %d of %d: %w", i+1, len(windows), err)
			}
			s := strings.Join(strings.Fields(r.Text), " ")
			if s == "" {
				s = "(nothing to note)"
			}
			summaries = append(summaries, fmt.Sprintf("Part %d: %s", i+1, s))
			if onPart != nil {
				onPart(round, i+1, len(windows))
			}
		}
		lines = summaries
	}
}
