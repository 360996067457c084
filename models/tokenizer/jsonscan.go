package tokenizer

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The vocab and merges are most of a tokenizer.json (Gemma 3's is 33 MB with
// 262k tokens and 515k merges). Decoding them through encoding/json's
// reflection made loading take seconds, so these two sections are read by a
// small dedicated scanner. The input has already been validated by
// encoding/json (it arrived as a json.RawMessage), which keeps this simple.

type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jsonScanner) expect(c byte) error {
	if s.peek() != c {
		return fmt.Errorf("offset %d: want %q", s.i, c)
	}
	s.i++
	return nil
}

// more consumes a ',' and reports true, or reports false at close.
func (s *jsonScanner) more(close byte, first bool) (bool, error) {
	c := s.peek()
	if c == close {
		s.i++
		return false, nil
	}
	if first {
		return true, nil
	}
	if c != ',' {
		return false, fmt.Errorf("offset %d: want ',' or %q", s.i, close)
	}
	s.i++
	return true, nil
}

func (s *jsonScanner) str() (string, error) {
	var scratch []byte
	b, err := s.strBytes(&scratch)
	return string(b), err
}

// strBytes reads a string: the bytes of s.b themselves when it has no
// escapes (no copy), else its decoded bytes, in *scratch (reused).
func (s *jsonScanner) strBytes(scratch *[]byte) ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			out := s.b[start:s.i:s.i]
			s.i++
			return out, nil
		case '\\':
			out, err := s.slowStr(append((*scratch)[:0], s.b[start:s.i]...))
			if err == nil {
				*scratch = out
			}
			return out, err
		default:
			s.i++
		}
	}
	return nil, fmt.Errorf("unterminated string")
}

// slowStr decodes the rest of a string with escapes, appending to buf.
func (s *jsonScanner) slowStr(buf []byte) ([]byte, error) {
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return buf, nil
		case c != '\\':
			buf = append(buf, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			break
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					save := s.i
					s.i += 2
					if lo, err := s.hex4(); err == nil {
						if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
							r2 = d
						} else {
							s.i = save
						}
					}
				}
				r = r2
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return nil, fmt.Errorf("offset %d: bad escape \\%c", s.i, e)
		}
	}
	return nil, fmt.Errorf("unterminated string")
}

func (s *jsonScanner) hex4() (rune, error) {
	if s.i+4 > len(s.b) {
		return 0, fmt.Errorf("short \\u escape")
	}
	v, err := strconv.ParseUint(string(s.b[s.i:s.i+4]), 16, 32)
	if err != nil {
		return 0, fmt.Errorf("bad \\u escape")
	}
	s.i += 4
	return rune(v), nil
}

func (s *jsonScanner) integer() (int, error) {
	s.ws()
	start := s.i
	neg := s.i < len(s.b) && s.b[s.i] == '-'
	if neg {
		s.i++
	}
	v, digits := 0, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if digits++; digits > 18 {
			return 0, fmt.Errorf("offset %d: integer id out of range", start)
		}
		v = 10*v + int(s.b[s.i]-'0')
		s.i++
	}
	if digits == 0 {
		return 0, fmt.Errorf("offset %d: want an integer id", start)
	}
	if neg {
		v = -v
	}
	return v, nil
}

// skipString steps over a string without decoding it.
func (s *jsonScanner) skipString() error {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return nil
		}
	}
	return fmt.Errorf("unterminated string")
}

// skipValue steps over one JSON value of any kind.
func (s *jsonScanner) skipValue() error {
	switch c := s.peek(); c {
	case '"':
		return s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if err := s.skipString(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return nil
				}
			}
			s.i++
		}
		return fmt.Errorf("unterminated %c", c)
	case 0:
		return fmt.Errorf("unexpected end of input")
	default: // number, true, false, null
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if s.i == start {
					return fmt.Errorf("offset %d: unexpected %q", s.i, s.b[s.i])
				}
				return nil
			}
			s.i++
		}
		return nil
	}
}

// objectFields splits a JSON object into its members' raw bytes without
// decoding them, so huge members (model, vocab) are not scanned repeatedly.
func objectFields(raw []byte) (map[string][]byte, error) {
	out, _, err := objectFieldsNested(raw, "")
	return out, err
}

// objectFieldsNested is objectFields that also splits the member named sub
// into its own members in the same pass, when sub is an object (else that
// map is nil): the model section of tokenizer.json is nearly all of the
// file, and skipping it whole before splitting it scanned it twice.
func objectFieldsNested(raw []byte, sub string) (map[string][]byte, map[string][]byte, error) {
	out, inner, n, err := objectPrefix(raw, sub)
	if err != nil {
		return nil, nil, err
	}
	s := &jsonScanner{b: raw, i: n}
	if s.peek() != 0 {
		return nil, nil, fmt.Errorf("offset %d: data after the top-level object", s.i)
	}
	return out, inner, nil
}

// objectPrefix splits the object at the start of raw into its members,
// and the member named sub (when not "") into its own if it is an object;
// n is how many bytes the object spans.
func objectPrefix(raw []byte, sub string) (out, inner map[string][]byte, n int, err error) {
	s := &jsonScanner{b: raw}
	if err := s.expect('{'); err != nil {
		return nil, nil, 0, err
	}
	out = map[string][]byte{}
	for first := true; ; first = false {
		ok, err := s.more('}', first)
		if err != nil {
			return nil, nil, 0, err
		}
		if !ok {
			return out, inner, s.i, nil
		}
		k, err := s.str()
		if err == nil {
			err = s.expect(':')
		}
		if err != nil {
			return nil, nil, 0, err
		}
		s.ws()
		start := s.i
		if sub != "" && k == sub {
			inner = nil // the last of duplicate keys wins
			if s.peek() == '{' {
				f, _, m, err := objectPrefix(raw[start:], "")
				if err != nil {
					return nil, nil, 0, fmt.Errorf("%q: %w", k, err)
				}
				s.i += m
				out[k], inner = raw[start:s.i], f
				continue
			}
		}
		if err := s.skipValue(); err != nil {
			return nil, nil, 0, fmt.Errorf("%q: %w", k, err)
		}
		out[k] = raw[start:s.i]
	}
}
