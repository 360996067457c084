package tokenizer

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decoder turns token strings back into text pieces (HF's decode_chain).
type decoder interface {
	decodeChain(tokens []string) []string
}

const supportedDecoders = "ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence"

type decodeFunc func([]string) []string

func (f decodeFunc) decodeChain(t []string) []string { return f(t) }

func parseDecoder(raw json.RawMessage) (decoder, error) {
	var t typed
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("decoder: %w", err)
	}
	switch t.Type {
	case "ByteLevel":
		return decodeFunc(byteLevelDecodeChain), nil
	case "Metaspace":
		var c struct {
			Replacement    string `json:"replacement"`
			PrependScheme  string `json:"prepend_scheme"`
			AddPrefixSpace *bool  `json:"add_prefix_space"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("decoder Metaspace: %w", err)
		}
		m := newMetaspace(c.Replacement, c.PrependScheme, c.AddPrefixSpace, true)
		return decodeFunc(m.decodeChain), nil
	case "Replace":
		r, err := parseReplace(raw)
		if err != nil {
			return nil, fmt.Errorf("decoder Replace: %w", err)
		}
		return decodeFunc(func(toks []string) []string {
			for i, s := range toks {
				toks[i] = r.apply(s)
			}
			return toks
		}), nil
	case "ByteFallback":
		return decodeFunc(byteFallbackChain), nil
	case "Fuse":
		return decodeFunc(func(toks []string) []string { return []string{strings.Join(toks, "")} }), nil
	case "Strip":
		var c struct {
			Content string `json:"content"`
			Start   int    `json:"start"`
			Stop    int    `json:"stop"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("decoder Strip: %w", err)
		}
		ch, _ := utf8.DecodeRuneInString(c.Content)
		return decodeFunc(func(toks []string) []string {
			for i, s := range toks {
				toks[i] = stripRunes(s, ch, c.Start, c.Stop)
			}
			return toks
		}), nil
	case "Sequence":
		var c struct {
			Decoders []json.RawMessage `json:"decoders"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("decoder Sequence: %w", err)
		}
		var seq []decoder
		for _, r := range c.Decoders {
			d, err := parseDecoder(r)
			if err != nil {
				return nil, err
			}
			seq = append(seq, d)
		}
		return decodeFunc(func(toks []string) []string {
			for _, d := range seq {
				toks = d.decodeChain(toks)
			}
			return toks
		}), nil
	}
	return nil, fmt.Errorf("unsupported decoder type %q (supported: %s)", t.Type, supportedDecoders)
}

func byteLevelDecodeChain(toks []string) []string {
	var buf []byte
	for _, t := range toks {
		buf = byteLevelDecode(buf, t)
	}
	return []string{lossyUTF8(buf)}
}

// byteFallbackByte parses a "<0xAB>" token.
func byteFallbackByte(tok string) (byte, bool) {
	if len(tok) != 6 || !strings.HasPrefix(tok, "<0x") || tok[5] != '>' {
		return 0, false
	}
	v, err := strconv.ParseUint(tok[3:5], 16, 8)
	if err != nil {
		return 0, false
	}
	return byte(v), true
}

// byteFallbackChain joins runs of <0xXX> tokens into text; a run that is not
// valid UTF-8 becomes one U+FFFD per byte, as HF does.
func byteFallbackChain(toks []string) []string {
	out := make([]string, 0, len(toks))
	var run []byte
	flush := func() {
		if len(run) == 0 {
			return
		}
		if utf8.Valid(run) {
			out = append(out, string(run))
		} else {
			for range run {
				out = append(out, "\uFFFD")
			}
		}
		run = run[:0]
	}
	for _, t := range toks {
		if b, ok := byteFallbackByte(t); ok {
			run = append(run, b)
			continue
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

// stripRunes removes up to start leading and stop trailing ch runes.
func stripRunes(s string, ch rune, start, stop int) string {
	for i := 0; i < start && strings.HasPrefix(s, string(ch)); i++ {
		s = s[utf8.RuneLen(ch):]
	}
	for i := 0; i < stop && strings.HasSuffix(s, string(ch)); i++ {
		s = s[:len(s)-utf8.RuneLen(ch)]
	}
	return s
}

func (m *metaspace) decodeChain(toks []string) []string {
	for i, t := range toks {
		t = strings.ReplaceAll(t, m.repl, " ")
		if i == 0 && m.prepend != "never" {
			t = strings.TrimPrefix(t, " ")
		}
		toks[i] = t
	}
	return toks
}
