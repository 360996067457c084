package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// GPT-2's byte-level BPE works on bytes but stores tokens as printable
// strings: each byte maps to one visible rune (printable Latin-1 bytes map to
// themselves, the rest to U+0100 and up, in byte order). Both tables are
// built once.
var (
	byteToRune [256]rune
	runeToByte = map[rune]byte{}
)

func init() {
	printable := func(b int) bool {
		return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
	}
	next := rune(256)
	for b := 0; b < 256; b++ {
		if printable(b) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = next
			next++
		}
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// byteLevelEncode maps every byte of s to its visible rune.
func byteLevelEncode(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		n += utf8.RuneLen(byteToRune[s[i]])
	}
	var b strings.Builder
	b.Grow(n)
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteToRune[s[i]])
	}
	return b.String()
}

// byteLevelDecode turns a token's visible runes back into bytes. Tokens with
// runes outside the table (added tokens such as "<|im_start|>\n" written
// literally) keep their own UTF-8 bytes, as Hugging Face does.
func byteLevelDecode(dst []byte, tok string) []byte {
	start := len(dst)
	for _, r := range tok {
		b, ok := runeToByte[r]
		if !ok {
			return append(dst[:start], tok...)
		}
		dst = append(dst, b)
	}
	return dst
}

// lossyUTF8 converts bytes to a string, replacing each maximal ill-formed
// subsequence with one U+FFFD, the way Rust's from_utf8_lossy (and so
// Hugging Face's decoders) does. Go's strings.ToValidUTF8 would collapse a
// whole run of bad bytes into one replacement instead.
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, w := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || w > 1 {
			out = append(out, b[i:i+w]...)
			i += w
			continue
		}
		i += maximalSubpart(b[i:])
		out = append(out, "\uFFFD"...)
	}
	return string(out)
}

// maximalSubpart returns how many bytes of an invalid sequence starting at
// b[0] belong to one replacement: the lead byte plus any continuation bytes
// that could still have been part of a valid sequence.
func maximalSubpart(b []byte) int {
	lead := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case lead >= 0xC2 && lead <= 0xDF:
		need = 1
	case lead == 0xE0:
		need, lo = 2, 0xA0
	case lead == 0xED:
		need, hi = 2, 0x9F
	case lead >= 0xE1 && lead <= 0xEF:
		need = 2
	case lead == 0xF0:
		need, lo = 3, 0x90
	case lead == 0xF4:
		need, hi = 3, 0x8F
	case lead >= 0xF1 && lead <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		c := b[n]
		if k > 0 {
			lo, hi = 0x80, 0xBF
		}
		if c < lo || c > hi {
			break
		}
		n++
	}
	return n
}

// incompleteTail reports how many bytes at the end of b are the start of a
// UTF-8 sequence that more bytes could still complete.
func incompleteTail(b []byte) int {
	for n := 1; n <= 3 && n <= len(b); n++ {
		c := b[len(b)-n]
		if c < 0x80 {
			return 0
		}
		if c >= 0xC0 { // lead byte
			if maximalSubpart(b[len(b)-n:]) == n && !utf8.FullRune(b[len(b)-n:]) {
				return n
			}
			return 0
		}
	}
	return 0
}
