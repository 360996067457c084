package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// AddedToken is an entry of tokenizer.json's added_tokens. They are matched
// in the raw text before normalization and pre-tokenization, so "<|im_end|>"
// typed in a prompt becomes one id rather than a dozen pieces.
type AddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// addedMatcher finds added tokens with leftmost-longest semantics (HF uses an
// Aho-Corasick automaton in that mode). A byte trie keyed by (node, byte) in
// one map keeps thousands of tokens (Gemma has 6,415) cheap.
type addedMatcher struct {
	next  map[uint64]int32
	term  []int32 // node -> index into toks, or -1
	toks  []*AddedToken
	first [256]bool // bytes that can start a token: skips most positions fast
}

func newAddedMatcher(toks []*AddedToken) *addedMatcher {
	m := &addedMatcher{next: map[uint64]int32{}, term: []int32{-1}}
	for _, t := range toks {
		if t.Content == "" {
			continue
		}
		node := int32(0)
		for i := 0; i < len(t.Content); i++ {
			k := uint64(node)<<8 | uint64(t.Content[i])
			nx, ok := m.next[k]
			if !ok {
				nx = int32(len(m.term))
				m.term = append(m.term, -1)
				m.next[k] = nx
			}
			node = nx
		}
		if m.term[node] < 0 {
			m.term[node] = int32(len(m.toks))
			m.toks = append(m.toks, t)
		}
		m.first[t.Content[0]] = true
	}
	return m
}

func (m *addedMatcher) empty() bool { return m == nil || len(m.toks) == 0 }

// longestAt returns the longest token starting at s[i:], or nil.
func (m *addedMatcher) longestAt(s string, i int) (*AddedToken, int) {
	if !m.first[s[i]] {
		return nil, 0
	}
	node := int32(0)
	var best *AddedToken
	bestEnd := 0
	for j := i; j < len(s); j++ {
		nx, ok := m.next[uint64(node)<<8|uint64(s[j])]
		if !ok {
			break
		}
		node = nx
		if t := m.term[node]; t >= 0 {
			best, bestEnd = m.toks[t], j+1
		}
	}
	return best, bestEnd
}

// segment is a span of input that is either an added token or plain text.
type segment struct {
	text  string
	id    int // -1 for plain text
	start int // byte offset in the text being split
}

// split cuts s around added tokens, honouring single_word, lstrip and
// rstrip the way HF's AddedVocabulary does.
func (m *addedMatcher) split(s string, base int, dst []segment) []segment {
	if m.empty() {
		return append(dst, segment{s, -1, base})
	}
	last := 0
	for i := 0; i < len(s); {
		tok, end := m.longestAt(s, i)
		if tok == nil {
			i++
			continue
		}
		start, stop := i, end
		if tok.SingleWord && !(isWordBoundaryBefore(s, start) && isWordBoundaryAfter(s, stop)) {
			i++
			continue
		}
		if tok.LStrip {
			for start > last {
				r, w := utf8.DecodeLastRuneInString(s[:start])
				if !unicode.IsSpace(r) {
					break
				}
				start -= w
			}
		}
		if tok.RStrip {
			for stop < len(s) {
				r, w := utf8.DecodeRuneInString(s[stop:])
				if !unicode.IsSpace(r) {
					break
				}
				stop += w
			}
		}
		if start > last {
			dst = append(dst, segment{s[last:start], -1, base + last})
		}
		dst = append(dst, segment{s[start:stop], tok.ID, base + start})
		last, i = stop, stop
	}
	if last < len(s) {
		dst = append(dst, segment{s[last:], -1, base + last})
	}
	return dst
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

func isWordBoundaryBefore(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return !isWordRune(r)
}

func isWordBoundaryAfter(s string, i int) bool {
	if i >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return !isWordRune(r)
}
