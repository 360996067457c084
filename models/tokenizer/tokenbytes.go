package tokenizer

import (
	"encoding/json"
	"strings"
)

// TokenBytes returns the bytes id adds to the text when it comes in the
// middle of a sequence, which may be part of a UTF-8 character (a
// byte-level or byte-fallback token). Constrained decoding needs these
// bytes, not Decode's text: Decode turns half a character into U+FFFD and
// drops a SentencePiece first token's leading space. ok is false for
// special tokens and unknown ids, which add no text.
func (t *Tokenizer) TokenBytes(id int) (b []byte, ok bool) {
	var tok string
	if a, found := t.addedByID[id]; found {
		if a.Special {
			return nil, false
		}
		if t.byteLevel {
			return []byte(a.Content), true // plain text, not byte-level symbols
		}
		tok = a.Content
	} else if id >= 0 && id < len(t.model.tokens) && t.model.tokens[id] != "" {
		tok = t.model.tokens[id]
	} else {
		return nil, false
	}
	switch {
	case t.byteLevel:
		return byteLevelDecode(nil, tok), true
	case t.dec == nil:
		return []byte(tok), true
	}
	if c, isByte := byteFallbackByte(tok); isByte {
		return []byte{c}, true
	}
	// Decode after an anchor so first-token rules (Metaspace's and Strip's
	// removal of a leading space) do not apply, then cut the anchor off.
	const anchor = "a"
	text := strings.Join(t.dec.decodeChain([]string{anchor, tok}), "")
	if !strings.HasPrefix(text, anchor) {
		return []byte(tok), true
	}
	return []byte(text[len(anchor):]), true
}

// decoderIsByteLevel reports whether a decoder is ByteLevel, alone or in a
// Sequence: its tokens then spell bytes, one character per byte.
func decoderIsByteLevel(raw []byte) bool {
	var d struct {
		Type     string            `json:"type"`
		Decoders []json.RawMessage `json:"decoders"`
	}
	if json.Unmarshal(raw, &d) != nil {
		return false
	}
	if d.Type == "ByteLevel" {
		return true
	}
	for _, sub := range d.Decoders {
		if decoderIsByteLevel(sub) {
			return true
		}
	}
	return false
}
