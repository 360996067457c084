package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The three split patterns almost every byte-level BPE model uses are
// recognised and run by a hand-written scanner: the general backtracking
// engine spends most of its time in closures, and these patterns are on
// the hot path of every prompt. TestScannerMatchesRegex and FuzzScanner hold
// the scanner to the engine's output.

const (
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwen2Pattern  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// scanSpec describes the differences between the GPT-2 and Llama-3 family
// patterns.
type scanSpec struct {
	llamaStyle bool // (?i) contractions, [^\r\n\p{L}\p{N}]? letter prefix, newline rules
	numMax     int  // longest digit run per piece; 0 means unbounded (with GPT-2's " ?")
}

var knownScanners = map[string]*scanSpec{
	gpt2Pattern:   {llamaStyle: false},
	llama3Pattern: {llamaStyle: true, numMax: 3},
	qwen2Pattern:  {llamaStyle: true, numMax: 1},
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return (r|0x20) >= 'a' && (r|0x20) <= 'z'
	}
	return unicode.Is(unicode.L, r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '0' && r <= '9'
	}
	return unicode.Is(unicode.N, r)
}

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || (r >= '\t' && r <= '\r')
	}
	return unicode.Is(unicode.White_Space, r)
}

// isOther is [^\s\p{L}\p{N}].
func isOther(r rune) bool { return !isSpace(r) && !isLetter(r) && !isNumber(r) }

func runeAt(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// findAll calls fn for each piece, exactly as the regex would split s.
func (sp *scanSpec) findAll(s string, fn func(i, j int)) {
	for i := 0; i < len(s); {
		j := sp.matchAt(s, i)
		if j <= i { // cannot happen: every rune falls in some class
			_, w := runeAt(s, i)
			i += w
			continue
		}
		fn(i, j)
		i = j
	}
}

// run advances over runes satisfying f, at most max of them (0: no limit).
func run(s string, i int, f func(rune) bool, max int) int {
	for n := 0; max == 0 || n < max; n++ {
		r, w := runeAt(s, i)
		if w == 0 || !f(r) {
			break
		}
		i += w
	}
	return i
}

func (sp *scanSpec) matchAt(s string, i int) int {
	r, w := runeAt(s, i)
	if r == '\'' {
		if j := sp.contraction(s, i+1); j > 0 {
			return j
		}
	}
	next, nw := runeAt(s, i+w)
	// Letters, with an optional one-rune prefix.
	if sp.llamaStyle {
		if !isLetter(r) && !isNumber(r) && r != '\r' && r != '\n' && nw > 0 && isLetter(next) {
			return run(s, i+w, isLetter, 0)
		}
	} else if r == ' ' && nw > 0 && isLetter(next) {
		return run(s, i+w, isLetter, 0)
	}
	if isLetter(r) {
		return run(s, i, isLetter, 0)
	}
	// Numbers.
	if sp.llamaStyle {
		if isNumber(r) {
			return run(s, i, isNumber, sp.numMax)
		}
	} else {
		if r == ' ' && nw > 0 && isNumber(next) {
			return run(s, i+w, isNumber, 0)
		}
		if isNumber(r) {
			return run(s, i, isNumber, 0)
		}
	}
	// Other symbols, with an optional leading space.
	start := -1
	if r == ' ' && nw > 0 && isOther(next) {
		start = i + w
	} else if isOther(r) {
		start = i
	}
	if start >= 0 {
		j := run(s, start, isOther, 0)
		if sp.llamaStyle {
			j = run(s, j, func(r rune) bool { return r == '\r' || r == '\n' }, 0)
		}
		return j
	}
	if !isSpace(r) {
		return i
	}
	// Whitespace run W = s[i:end].
	end, lastNL, lastStart := i, -1, i
	for end < len(s) {
		c, cw := runeAt(s, end)
		if !isSpace(c) {
			break
		}
		if c == '\r' || c == '\n' {
			lastNL = end
		}
		lastStart = end
		end += cw
	}
	if sp.llamaStyle && lastNL >= 0 { // \s*[\r\n]+ : up to the last newline
		return lastNL + 1
	}
	if end == len(s) { // \s+(?!\S) at the end of input
		return end
	}
	if lastStart > i { // \s+(?!\S): leave the last space for the next word
		return lastStart
	}
	return end // \s+
}

// contraction matches the suffix of 's 't 're 've 'm 'll 'd after the
// apostrophe at i-1, case-insensitively for Llama-style patterns, and
// returns the end or -1.
func (sp *scanSpec) contraction(s string, i int) int {
	eq := func(j int, want byte) (int, bool) {
		r, w := runeAt(s, j)
		if w == 0 {
			return 0, false
		}
		if r == rune(want) {
			return w, true
		}
		if sp.llamaStyle && r != rune(want) && foldEq(r, rune(want)) {
			return w, true
		}
		return 0, false
	}
	for _, suf := range []string{"s", "t", "re", "ve", "m", "ll", "d"} {
		j, ok := i, true
		for k := 0; k < len(suf) && ok; k++ {
			var w int
			w, ok = eq(j, suf[k])
			j += w
		}
		if ok {
			return j
		}
	}
	return -1
}
