package tokenizer

import "fmt"

// scanVocab reads {"token": id, ...}. The tokens' bytes are gathered into
// one string that every token is a substring of: one allocation for the
// whole vocabulary instead of one per token.
func scanVocab(raw []byte) (*vocabIndex, error) {
	s := &jsonScanner{b: raw}
	if err := s.expect('{'); err != nil {
		return nil, fmt.Errorf("vocab: %w", err)
	}
	type entry struct{ lo, hi, id int32 }
	entries := make([]entry, 0, len(raw)/16)
	arena := make([]byte, 0, len(raw)/2)
	var buf []byte
	for first := true; ; first = false {
		ok, err := s.more('}', first)
		if err != nil {
			return nil, fmt.Errorf("vocab: %w", err)
		}
		if !ok {
			break
		}
		k, err := s.strBytes(&buf)
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
		if id < 0 || id > maxTokenID {
			return nil, fmt.Errorf("token %q has id %d outside [0, %d]", k, id, maxTokenID)
		}
		if len(arena)+len(k) > maxVocabBytes {
			return nil, fmt.Errorf("vocab: tokens over %d bytes in all", maxVocabBytes)
		}
		lo := len(arena)
		arena = append(arena, k...)
		entries = append(entries, entry{int32(lo), int32(len(arena)), int32(id)})
	}
	all := string(arena)
	v := newVocabIndex(len(entries))
	for _, e := range entries {
		v.set(all[e.lo:e.hi], int(e.id))
	}
	return v, nil
}

// maxVocabBytes bounds the vocabulary's text (offsets are int32).
const maxVocabBytes = 1<<31 - 1

// scanMerges reads ["a b", ...] or [["a", "b"], ...], calling fn with each
// merge's two tokens. a and b are only valid during the call: they point
// into raw, or into scratch when the strings have escapes.
func scanMerges(raw []byte, fn func(a, b []byte, rank int) error) error {
	s := &jsonScanner{b: raw}
	if err := s.expect('['); err != nil {
		return fmt.Errorf("merges: %w", err)
	}
	var bufA, bufB []byte
	for n, first := 0, true; ; n, first = n+1, false {
		ok, err := s.more(']', first)
		if err != nil {
			return fmt.Errorf("merges: %w", err)
		}
		if !ok {
			return nil
		}
		if s.peek() == '"' {
			line, err := s.strBytes(&bufA)
			if err != nil {
				return fmt.Errorf("merge %d: %w", n, err)
			}
			a, b, found := cutSpace(line)
			if !found {
				return fmt.Errorf("merge %d %q: want two space-separated tokens", n, line)
			}
			if err := fn(a, b, n); err != nil {
				return err
			}
			continue
		}
		var a, b []byte
		err = s.expect('[')
		if err == nil {
			a, err = s.strBytes(&bufA)
		}
		if err == nil {
			err = s.expect(',')
		}
		if err == nil {
			b, err = s.strBytes(&bufB)
		}
		if err == nil {
			err = s.expect(']')
		}
		if err != nil {
			return fmt.Errorf("merge %d: want a pair of strings: %w", n, err)
		}
		if err := fn(a, b, n); err != nil {
			return err
		}
	}
}

// cutSpace splits "a b" at its only space.
func cutSpace(line []byte) ([]byte, []byte, bool) {
	k := -1
	for i, c := range line {
		if c == ' ' {
			if k >= 0 {
				return nil, nil, false
			}
			k = i
		}
	}
	if k < 0 {
		return nil, nil, false
	}
	return line[:k], line[k+1:], true
}
