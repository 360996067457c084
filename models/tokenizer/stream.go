package tokenizer

import "strings"

// Stream turns ids arriving one at a time into text deltas. Decoding a
// token alone is wrong in two ways: a byte-level or byte-fallback token may
// hold half a character, and SentencePiece decoders treat the first token's
// leading space specially. So the stream re-decodes a short window ending at
// the new id and emits only what the window added, holding text back while
// it ends in an incomplete character.
type Stream struct {
	t *Tokenizer
	// SkipSpecial hides special tokens (BOS, EOS, chat markers).
	SkipSpecial bool

	ids         []int
	prefix      string // decoded text of ids before the latest emission
	prefixIndex int    // ids[prefixIndex:] are the ids of the latest emission
}

// maxHeld bounds how many ids may wait for a character to complete; a model
// that emits genuinely invalid bytes must not stall the stream forever.
const maxHeld = 8

// NewStream starts a streaming decode.
func (t *Tokenizer) NewStream() *Stream { return &Stream{t: t} }

// NewStreamAfter starts a streaming decode that continues after context
// (e.g. the prompt's last few ids), so a SentencePiece model's first word
// keeps the leading space it would have mid-text instead of losing it as a
// first token does.
func (t *Tokenizer) NewStreamAfter(context []int, skipSpecial bool) *Stream {
	if len(context) > maxHeld {
		context = context[len(context)-maxHeld:]
	}
	s := &Stream{t: t, SkipSpecial: skipSpecial, ids: append([]int(nil), context...)}
	s.prefix = t.Decode(s.ids, skipSpecial)
	return s
}

// Add feeds one id and returns the new text, possibly "".
func (s *Stream) Add(id int) string {
	s.ids = append(s.ids, id)
	text := s.t.Decode(s.ids, s.SkipSpecial)
	held := len(s.ids) - s.prefixIndex
	if len(text) <= len(s.prefix) {
		return ""
	}
	if strings.HasSuffix(text, "\uFFFD") && held < maxHeld {
		return ""
	}
	return s.emit(text)
}

func (s *Stream) emit(text string) string {
	n := commonPrefix(text, s.prefix)
	delta := text[n:]
	// Keep the ids decoded since the previous emission as left context for
	// the next window, then forget everything older.
	newIndex := len(s.ids) - s.prefixIndex
	s.ids = append(s.ids[:0], s.ids[s.prefixIndex:]...)
	s.prefix = s.t.Decode(s.ids, s.SkipSpecial)
	s.prefixIndex = newIndex
	return delta
}

// Flush returns whatever text is still held back (as U+FFFD for bytes that
// never completed a character), for the end of generation.
func (s *Stream) Flush() string {
	text := s.t.Decode(s.ids, s.SkipSpecial)
	if len(text) <= len(s.prefix) {
		return ""
	}
	return s.emit(text)
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
