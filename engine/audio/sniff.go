package audio

import (
	"bytes"
	"encoding/binary"
)

// Container is a file format recognised by its leading bytes.
type Container string

const (
	Unknown  Container = ""
	WAV      Container = "wav"  // RIFF/WAVE, RF64
	FLAC     Container = "flac" // native FLAC
	MP3      Container = "mp3"  // MPEG audio frames, optionally after ID3v2
	Ogg      Container = "ogg"  // Ogg; the codec is decided by the first packet
	MP4      Container = "mp4"  // ISO BMFF / QuickTime: .m4a, .mp4, .mov
	ADTS     Container = "aac"  // raw AAC in ADTS frames
	AIFF     Container = "aiff" // AIFF / AIFC
	CAF      Container = "caf"  // Core Audio Format
	Matroska Container = "matroska"
	AMR      Container = "amr"
)

// SniffLen is how many leading bytes Sniff wants to see. Fewer work for
// most formats; an ID3v2 tag longer than this hides what follows it, in
// which case Sniff reports MP3 (by far the most common case).
const SniffLen = 4096

// Sniff names the container of a file from its first bytes: the fixed
// signatures of the formats table in order, then what follows an ID3 tag,
// then bare MPEG or ADTS frames.
func Sniff(head []byte) Container {
	for _, f := range formats {
		if f.match != nil && f.match(head) {
			return f.Container
		}
	}
	if bytes.HasPrefix(head, []byte("ID3")) {
		return sniffAfterID3(head)
	}
	return sniffFrames(head)
}

// isMP4 recognises an ISO BMFF file by a plausible first box.
func isMP4(head []byte) bool {
	if len(head) < 8 {
		return false
	}
	size := binary.BigEndian.Uint32(head)
	switch string(head[4:8]) {
	case "ftyp":
		return size >= 8
	case "moov", "mdat", "free", "skip", "wide":
		// Old QuickTime files may start with any of these; require a sane
		// size so a text file starting with "....free" is not taken.
		return size >= 8 || size == 1
	}
	return false
}

// id3Size returns the full length of an ID3v2 tag at the start of b, or 0.
func id3Size(b []byte) int {
	if len(b) < 10 || string(b[:3]) != "ID3" {
		return 0
	}
	// Tag size is 4 "syncsafe" bytes of 7 bits each.
	for _, c := range b[6:10] {
		if c&0x80 != 0 {
			return 0
		}
	}
	n := int(b[6])<<21 | int(b[7])<<14 | int(b[8])<<7 | int(b[9])
	n += 10
	if b[5]&0x10 != 0 { // footer present
		n += 10
	}
	return n
}

// sniffAfterID3 looks past an ID3v2 tag: FLAC and AAC files sometimes carry
// one too, not only MP3.
func sniffAfterID3(head []byte) Container {
	n := id3Size(head)
	if n == 0 {
		return Unknown
	}
	if n >= len(head) {
		return MP3
	}
	rest := head[n:]
	if bytes.HasPrefix(rest, []byte("fLaC")) {
		return FLAC
	}
	if c := sniffFrames(rest); c != Unknown {
		return c
	}
	// Some encoders pad the tag with more zeros than its size says.
	for len(rest) > 0 && rest[0] == 0 {
		rest = rest[1:]
	}
	if c := sniffFrames(rest); c != Unknown {
		return c
	}
	return MP3 // a tag with nothing recognisable after it in the window
}

// sniffFrames recognises headerless frame streams: MPEG audio or ADTS AAC.
// A second frame header is required when the window reaches it, which makes
// random bytes starting with 0xFF unlikely to pass.
func sniffFrames(b []byte) Container {
	if len(b) < 4 || b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return Unknown
	}
	if b[1]&0x06 == 0 { // layer bits 00: ADTS
		if b[1]&0xF6 != 0xF0 {
			return Unknown
		}
		if len(b) < 7 {
			return ADTS
		}
		n := int(b[3]&3)<<11 | int(b[4])<<3 | int(b[5])>>5
		if n < 7 {
			return Unknown
		}
		if n+2 <= len(b) && (b[n] != 0xFF || b[n+1]&0xF6 != 0xF0) {
			return Unknown
		}
		return ADTS
	}
	h, ok := parseMPEGHeader(b)
	if !ok {
		return Unknown
	}
	if h.frameLen+4 <= len(b) {
		if _, ok := parseMPEGHeader(b[h.frameLen:]); !ok {
			return Unknown
		}
	}
	return MP3
}
