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
	if err := s.expect('"'); err != nil {
		return "", err
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			out := string(s.b[start:s.i])
			s.i++
			return out, nil
		case '\\':
			return s.slowStr(start)
		default:
			s.i++
		}
	}
	return "", fmt.Errorf("unterminated string")
}

// slowStr decodes a string with escapes, starting again at start.
func (s *jsonScanner) slowStr(start int) (string, error) {
	buf := append([]byte(nil), s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return string(buf), nil
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
				return "", err
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
			return "", fmt.Errorf("offset %d: bad escape \\%c", s.i, e)
		}
	}
	return "", fmt.Errorf("unterminated string")
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
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	v, err := strconv.Atoi(string(s.b[start:s.i]))
	if err != nil {
		return 0, fmt.Errorf("offset %d: want an integer id", start)
	}
	return v, nil
}

// scanVocab reads {"token": id, ...}.
func scanVocab(raw []byte) (map[string]int, error) {
	s := &jsonScanner{b: raw}
	if err := s.expect('{'); err != nil {
		return nil, fmt.Errorf("vocab: %w", err)
	}
	vocab := make(map[string]int, len(raw)/16)
	for first := true; ; first = false {
		ok, err := s.more('}', first)
		if err != nil {
			return nil, fmt.Errorf("vocab: %w", err)
		}
		if !ok {
			return vocab, nil
		}
		k, err := s.str()
		if err == nil {
			err = s.expect(':')
		}
		var id int
		if err == nil {
			id, err = s.integer()
		}
		if err != nil {
			return nil, fmt.Errorf("vocab: %w", err)
		}
		vocab[k] = id
	}
}

// scanMerges reads ["a b", ...] or [["a", "b"], ...].
func scanMerges(raw []byte) ([][2]string, error) {
	s := &jsonScanner{b: raw}
	if err := s.expect('['); err != nil {
		return nil, fmt.Errorf("merges: %w", err)
	}
	var out [][2]string
	for first := true; ; first = false {
		ok, err := s.more(']', first)
		if err != nil {
			return nil, fmt.Errorf("merges: %w", err)
		}
		if !ok {
			return out, nil
		}
		n := len(out)
		if s.peek() == '"' {
			line, err := s.str()
			if err != nil {
				return nil, fmt.Errorf("merge %d: %w", n, err)
			}
			a, b, found := cutSpace(line)
			if !found {
				return nil, fmt.Errorf("merge %d %q: want two space-separated tokens", n, line)
			}
			out = append(out, [2]string{a, b})
			continue
		}
		var pair [2]string
		err = s.expect('[')
		for k := 0; k < 2 && err == nil; k++ {
			if k == 1 {
				err = s.expect(',')
			}
			if err == nil {
				pair[k], err = s.str()
			}
		}
		if err == nil {
			err = s.expect(']')
		}
		if err != nil {
			return nil, fmt.Errorf("merge %d: want a pair of strings: %w", n, err)
		}
		out = append(out, pair)
	}
}

// cutSpace splits "a b" at its only space.
func cutSpace(line string) (string, string, bool) {
	k := -1
	for i := 0; i < len(line); i++ {
		if line[i] == ' ' {
			if k >= 0 {
				return "", "", false
			}
			k = i
		}
	}
	if k < 0 {
		return "", "", false
	}
	return line[:k], line[k+1:], true
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
	s := &jsonScanner{b: raw}
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for first := true; ; first = false {
		ok, err := s.more('}', first)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		k, err := s.str()
		if err == nil {
			err = s.expect(':')
		}
		if err != nil {
			return nil, err
		}
		s.ws()
		start := s.i
		if err := s.skipValue(); err != nil {
			return nil, fmt.Errorf("%q: %w", k, err)
		}
		out[k] = raw[start:s.i]
	}
	if s.peek() != 0 {
		return nil, fmt.Errorf("offset %d: data after the top-level object", s.i)
	}
	return out, nil
}
