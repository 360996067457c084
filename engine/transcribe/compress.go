package transcribe

import (
	"bytes"
	"compress/zlib"
)

// compressionRatio is len(text) / len(zlib(text)) over the UTF-8 bytes: a
// high value means repetitive text, the usual sign of a decoding loop.
// The compressed length is C zlib's at level 6, as OpenAI computes it with
// CPython's zlib.compress (zlibSize); texts too long for one deflate block
// (never a single window's) fall back to Go's compress/zlib, whose length
// can differ by a few bytes.
func compressionRatio(text string) float64 {
	b := []byte(text)
	if len(b) == 0 {
		return 0 // 0 bytes over zlib's 8-byte empty stream
	}
	if n, ok := zlibSize(b); ok {
		return float64(len(b)) / float64(n)
	}
	var buf bytes.Buffer
	w, _ := zlib.NewWriterLevel(&buf, 6)
	w.Write(b)
	w.Close()
	return float64(len(b)) / float64(buf.Len())
}
