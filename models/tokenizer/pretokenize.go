package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
)

// piece is one span of text moving through pre-tokenization. first marks the
// span that starts the input (Metaspace's prepend_scheme "first" needs it).
type piece struct {
	s     string
	first bool
}

type preTokenizer interface {
	preTokenize(in []piece) []piece
}

const supportedPreTokenizers = "ByteLevel, Split, Metaspace, Sequence, Digits, Whitespace, WhitespaceSplit"

// gpt2Pattern is the split regex ByteLevel uses when use_regex is set; it is
// also Whisper's pattern.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

var gpt2Scanner = knownScanners[gpt2Pattern]

func mustRegex(src string) *regex {
	re, err := compileRegex(src)
	if err != nil {
		panic(err)
	}
	return re
}

type typed struct {
	Type string `json:"type"`
}

// patternJSON is HF's {"String": ...} or {"Regex": ...}.
type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

func (p patternJSON) compile() (*regex, string, error) {
	switch {
	case p.Regex != nil:
		re, err := compileRegex(*p.Regex)
		return re, "", err
	case p.String != nil:
		return nil, *p.String, nil
	}
	return nil, "", fmt.Errorf("pattern has neither String nor Regex")
}

func parsePreTokenizer(raw json.RawMessage) (preTokenizer, error) {
	var t typed
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch t.Type {
	case "ByteLevel":
		var c struct {
			AddPrefixSpace bool  `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("pre_tokenizer ByteLevel: %w", err)
		}
		return &byteLevelPre{addPrefixSpace: c.AddPrefixSpace, useRegex: c.UseRegex == nil || *c.UseRegex}, nil
	case "Split":
		var c struct {
			Pattern  patternJSON `json:"pattern"`
			Behavior string      `json:"behavior"`
			Invert   bool        `json:"invert"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("pre_tokenizer Split: %w", err)
		}
		re, lit, err := c.Pattern.compile()
		if err != nil {
			return nil, fmt.Errorf("pre_tokenizer Split: %w", err)
		}
		if err := checkBehavior(c.Behavior); err != nil {
			return nil, fmt.Errorf("pre_tokenizer Split: %w", err)
		}
		sp := &splitPre{re: re, lit: lit, behavior: c.Behavior, invert: c.Invert}
		if re != nil {
			sp.scan = knownScanners[re.src]
		}
		return sp, nil
	case "Metaspace":
		var c struct {
			Replacement    string `json:"replacement"`
			PrependScheme  string `json:"prepend_scheme"`
			AddPrefixSpace *bool  `json:"add_prefix_space"`
			Split          *bool  `json:"split"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("pre_tokenizer Metaspace: %w", err)
		}
		return newMetaspace(c.Replacement, c.PrependScheme, c.AddPrefixSpace, c.Split == nil || *c.Split), nil
	case "Sequence":
		var c struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("pre_tokenizer Sequence: %w", err)
		}
		var seq seqPre
		for _, r := range c.PreTokenizers {
			p, err := parsePreTokenizer(r)
			if err != nil {
				return nil, err
			}
			seq = append(seq, p)
		}
		return seq, nil
	case "Digits":
		var c struct {
			Individual bool `json:"individual_digits"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("pre_tokenizer Digits: %w", err)
		}
		if c.Individual {
			return &splitPre{re: mustRegex(`\p{Nd}`), behavior: "Isolated"}, nil
		}
		return &splitPre{re: mustRegex(`\p{Nd}+`), behavior: "Isolated"}, nil
	case "Whitespace":
		return &splitPre{re: mustRegex(`\w+|[^\w\s]+`), behavior: "Removed", invert: true}, nil
	case "WhitespaceSplit":
		return &splitPre{re: mustRegex(`\s+`), behavior: "Removed"}, nil
	}
	return nil, fmt.Errorf("unsupported pre_tokenizer type %q (supported: %s)", t.Type, supportedPreTokenizers)
}

func checkBehavior(b string) error {
	switch b {
	case "Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous":
		return nil
	}
	return fmt.Errorf("unsupported split behavior %q", b)
}

type seqPre []preTokenizer

func (s seqPre) preTokenize(in []piece) []piece {
	for _, p := range s {
		in = p.preTokenize(in)
	}
	return in
}

type byteLevelPre struct {
	addPrefixSpace bool
	useRegex       bool
}

func (b *byteLevelPre) preTokenize(in []piece) []piece {
	out := make([]piece, 0, len(in))
	for _, p := range in {
		s := p.s
		if b.addPrefixSpace && !strings.HasPrefix(s, " ") {
			s = " " + s
		}
		if !b.useRegex {
			out = append(out, piece{byteLevelEncode(s), p.first})
			continue
		}
		first := p.first
		gpt2Scanner.findAll(s, func(i, j int) {
			out = append(out, piece{byteLevelEncode(s[i:j]), first})
			first = false
		})
	}
	return out
}

type splitPre struct {
	re       *regex
	scan     *scanSpec // fast path for well-known patterns, else nil
	lit      string
	behavior string
	invert   bool
}

type span struct {
	start, end int
	match      bool
}

func (sp *splitPre) preTokenize(in []piece) []piece {
	out := make([]piece, 0, len(in))
	if sp.scan != nil && sp.behavior == "Isolated" && !sp.invert {
		// The common Llama 3 / Qwen case: the scanner's matches tile the
		// text, so each match is a piece and no span list is needed.
		for _, p := range in {
			first := p.first
			sp.scan.findAll(p.s, func(i, j int) {
				out = append(out, piece{p.s[i:j], first})
				first = false
			})
		}
		return out
	}
	for _, p := range in {
		first := p.first
		for _, s := range splitSpans(p.s, sp.spans(p.s), sp.behavior, sp.invert) {
			out = append(out, piece{s, first})
			first = false
		}
	}
	return out
}

// spans covers s with alternating match / non-match spans.
func (sp *splitPre) spans(s string) []span {
	var out []span
	last := 0
	add := func(i, j int) {
		if i > last {
			out = append(out, span{last, i, false})
		}
		out = append(out, span{i, j, true})
		last = j
	}
	if sp.scan != nil {
		sp.scan.findAll(s, add)
	} else if sp.re != nil {
		sp.re.findAll(s, add)
	} else if sp.lit != "" {
		for i := 0; ; {
			k := strings.Index(s[i:], sp.lit)
			if k < 0 {
				break
			}
			add(i+k, i+k+len(sp.lit))
			i += k + len(sp.lit)
		}
	}
	if last < len(s) {
		out = append(out, span{last, len(s), false})
	}
	return out
}

// splitSpans applies an HF SplitDelimiterBehavior to the spans.
func splitSpans(s string, spans []span, behavior string, invert bool) []string {
	if invert {
		for i := range spans {
			spans[i].match = !spans[i].match
		}
	}
	var merged []span
	switch behavior {
	case "Removed":
		for _, sp := range spans {
			if !sp.match {
				merged = append(merged, sp)
			}
		}
	case "Isolated":
		merged = spans
	case "MergedWithPrevious":
		prevMatch := false
		for _, sp := range spans {
			if sp.match && !prevMatch && len(merged) > 0 {
				merged[len(merged)-1].end = sp.end
			} else {
				merged = append(merged, sp)
			}
			prevMatch = sp.match
		}
	case "MergedWithNext":
		prevMatch := false
		for i := len(spans) - 1; i >= 0; i-- {
			sp := spans[i]
			if sp.match && !prevMatch && len(merged) > 0 {
				merged[len(merged)-1].start = sp.start
			} else {
				merged = append(merged, sp)
			}
			prevMatch = sp.match
		}
		for i, j := 0, len(merged)-1; i < j; i, j = i+1, j-1 {
			merged[i], merged[j] = merged[j], merged[i]
		}
	case "Contiguous":
		prevMatch := false
		for _, sp := range spans {
			if sp.match == prevMatch && len(merged) > 0 {
				merged[len(merged)-1].end = sp.end
			} else {
				merged = append(merged, sp)
			}
			prevMatch = sp.match
		}
	}
	out := make([]string, 0, len(merged))
	for _, sp := range merged {
		if sp.end > sp.start {
			out = append(out, s[sp.start:sp.end])
		}
	}
	return out
}

// metaspace replaces spaces with ▁ and optionally prepends one, splitting
// so each word keeps its leading ▁ (SentencePiece's convention).
type metaspace struct {
	repl    string
	prepend string // "always", "first", "never"
	split   bool
}

func newMetaspace(repl, scheme string, addPrefix *bool, split bool) *metaspace {
	if repl == "" {
		repl = "▁"
	}
	if scheme == "" {
		scheme = "always"
		if addPrefix != nil && !*addPrefix {
			scheme = "never"
		}
	}
	return &metaspace{repl: repl, prepend: scheme, split: split}
}

func (m *metaspace) preTokenize(in []piece) []piece {
	out := make([]piece, 0, len(in))
	for _, p := range in {
		s := strings.ReplaceAll(p.s, " ", m.repl)
		if (m.prepend == "always" || (m.prepend == "first" && p.first)) && !strings.HasPrefix(s, m.repl) && s != "" {
			s = m.repl + s
		}
		if !m.split {
			out = append(out, piece{s, p.first})
			continue
		}
		var spans []span
		last := 0
		for i := 0; ; {
			k := strings.Index(s[i:], m.repl)
			if k < 0 {
				break
			}
			if i+k > last {
				spans = append(spans, span{last, i + k, false})
			}
			spans = append(spans, span{i + k, i + k + len(m.repl), true})
			i += k + len(m.repl)
			last = i
		}
		if last < len(s) {
			spans = append(spans, span{last, len(s), false})
		}
		first := p.first
		for _, w := range splitSpans(s, spans, "MergedWithNext", false) {
			out = append(out, piece{w, first})
			first = false
		}
	}
	return out
}
