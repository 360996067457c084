package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

type normalizer interface {
	normalize(s string) string
}

const supportedNormalizers = "NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip, Sequence"

type normFunc func(string) string

func (f normFunc) normalize(s string) string { return f(s) }

func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	var t typed
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	switch t.Type {
	case "NFC":
		return normFunc(norm.NFC.String), nil
	case "NFD":
		return normFunc(norm.NFD.String), nil
	case "NFKC":
		return normFunc(norm.NFKC.String), nil
	case "NFKD":
		return normFunc(norm.NFKD.String), nil
	case "Lowercase":
		return normFunc(strings.ToLower), nil
	case "Prepend":
		var c struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("normalizer Prepend: %w", err)
		}
		return normFunc(func(s string) string {
			if s == "" { // HF leaves empty strings alone
				return s
			}
			return c.Prepend + s
		}), nil
	case "Replace":
		r, err := parseReplace(raw)
		if err != nil {
			return nil, fmt.Errorf("normalizer Replace: %w", err)
		}
		return normFunc(r.apply), nil
	case "Strip":
		var c struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("normalizer Strip: %w", err)
		}
		return normFunc(func(s string) string {
			if c.Left {
				s = strings.TrimLeftFunc(s, isWhite)
			}
			if c.Right {
				s = strings.TrimRightFunc(s, isWhite)
			}
			return s
		}), nil
	case "Sequence":
		var c struct {
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("normalizer Sequence: %w", err)
		}
		var seq []normalizer
		for _, r := range c.Normalizers {
			n, err := parseNormalizer(r)
			if err != nil {
				return nil, err
			}
			seq = append(seq, n)
		}
		return normFunc(func(s string) string {
			for _, n := range seq {
				s = n.normalize(s)
			}
			return s
		}), nil
	}
	return nil, fmt.Errorf("unsupported normalizer type %q (supported: %s)", t.Type, supportedNormalizers)
}

func isWhite(r rune) bool { return unicode.Is(unicode.White_Space, r) }

// replacer is HF's Replace: a literal or regex pattern and its replacement.
type replacer struct {
	re      *regex
	lit     string
	content string
}

func parseReplace(raw json.RawMessage) (*replacer, error) {
	var c struct {
		Pattern patternJSON `json:"pattern"`
		Content string      `json:"content"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	re, lit, err := c.Pattern.compile()
	if err != nil {
		return nil, err
	}
	return &replacer{re: re, lit: lit, content: c.Content}, nil
}

func (r *replacer) apply(s string) string {
	if r.re == nil {
		if r.lit == "" {
			return s
		}
		return strings.ReplaceAll(s, r.lit, r.content)
	}
	var b strings.Builder
	last := 0
	r.re.findAll(s, func(i, j int) {
		b.WriteString(s[last:i])
		b.WriteString(r.content)
		last = j
	})
	b.WriteString(s[last:])
	return b.String()
}
