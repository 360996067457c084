package audio

import (
	"bytes"
	"path/filepath"
	"strings"
)

// Format is one container Hark reads. Formats is the one list of them: the
// sniffer, the error messages, the MIME types the player is served with, the
// file picker's accept list and `hark audio info` all derive from it.
type Format struct {
	Container Container `json:"container"`
	// Name is the format as users know it, for messages and the UI.
	Name string `json:"name"`
	// Magic says how the leading bytes are recognised (documentation; the
	// test of it is match).
	Magic string `json:"magic"`
	// Codecs and Decoder say what decodes the audio inside: Hark's own Go
	// decoders ("built in"), or the system's (AVFoundation on macOS,
	// ffmpeg elsewhere).
	Codecs  string `json:"codecs"`
	Decoder string `json:"decoder"`
	// MIME is the Content-Type an <audio> element needs to play it.
	MIME string `json:"mime"`
	// Extensions are the usual file name endings, lower case with the
	// dot, the most common first.
	Extensions []string `json:"extensions"`

	// match recognises the format at the start of a file. Formats without
	// one (bare MPEG and ADTS frames) are found by sniffFrames, after the
	// fixed signatures and any ID3 tag.
	match func(head []byte) bool
}

const (
	builtIn = "built in"
	system  = "system"
)

var formats = []Format{
	{Container: WAV, Name: "WAV", Magic: "RIFF/RF64/BW64 ... WAVE", Codecs: "PCM, IEEE float, A-law, µ-law", Decoder: builtIn,
		MIME: "audio/wav", Extensions: []string{".wav", ".wave", ".bwf"}, match: isWAV},
	{Container: FLAC, Name: "FLAC", Magic: "fLaC", Codecs: "FLAC", Decoder: builtIn,
		MIME: "audio/flac", Extensions: []string{".flac"}, match: prefix("fLaC")},
	{Container: MP3, Name: "MP3", Magic: "ID3 tag or MPEG audio frame sync", Codecs: "MPEG-1/2 Layer III (built in); Layer I/II (system)", Decoder: builtIn,
		MIME: "audio/mpeg", Extensions: []string{".mp3", ".mp2", ".mpga"}},
	{Container: Ogg, Name: "Ogg", Magic: "OggS", Codecs: "Vorbis (built in); Opus, FLAC, Speex (system)", Decoder: builtIn,
		MIME: "audio/ogg", Extensions: []string{".ogg", ".oga", ".opus"}, match: prefix("OggS")},
	{Container: MP4, Name: "AAC/M4A", Magic: "an ISO BMFF box (ftyp, moov, mdat, free, skip, wide)", Codecs: "AAC, ALAC", Decoder: system,
		MIME: "audio/mp4", Extensions: []string{".m4a", ".mp4", ".m4b", ".mov"}, match: isMP4},
	{Container: ADTS, Name: "AAC (ADTS)", Magic: "ADTS frame sync", Codecs: "AAC", Decoder: system,
		MIME: "audio/aac", Extensions: []string{".aac"}},
	{Container: AIFF, Name: "AIFF", Magic: "FORM ... AIFF/AIFC", Codecs: "PCM", Decoder: system,
		MIME: "audio/aiff", Extensions: []string{".aiff", ".aif", ".aifc"}, match: isAIFF},
	{Container: CAF, Name: "CAF", Magic: "caff", Codecs: "PCM, AAC, ALAC", Decoder: system,
		MIME: "audio/x-caf", Extensions: []string{".caf"}, match: prefix("caff")},
	{Container: Matroska, Name: "Matroska/WebM audio", Magic: "EBML header 1A 45 DF A3", Codecs: "Opus, Vorbis, AAC", Decoder: system,
		MIME: "audio/webm", Extensions: []string{".webm", ".mka", ".mkv"}, match: prefix("\x1A\x45\xDF\xA3")},
	{Container: AMR, Name: "AMR", Magic: "#!AMR", Codecs: "AMR-NB, AMR-WB", Decoder: system,
		MIME: "audio/amr", Extensions: []string{".amr"}, match: prefix("#!AMR")},
}

// Formats lists every container Hark reads, in the order Sniff tries them.
func Formats() []Format {
	out := make([]Format, len(formats))
	copy(out, formats)
	return out
}

// FormatOf returns the table row of container c.
func FormatOf(c Container) (Format, bool) {
	for _, f := range formats {
		if f.Container == c {
			return f, true
		}
	}
	return Format{}, false
}

// FormatByName finds the format a file name's extension suggests. Sniff,
// not the name, decides how a file is read; this serves MIME types and
// the file picker.
func FormatByName(name string) (Format, bool) {
	ext := strings.ToLower(filepath.Ext(name))
	for _, f := range formats {
		for _, e := range f.Extensions {
			if e == ext {
				return f, true
			}
		}
	}
	return Format{}, false
}

// FormatNames lists the formats for "expected ..." messages:
// "WAV, FLAC, MP3, ... or AMR".
func FormatNames() string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func prefix(magic string) func([]byte) bool {
	return func(head []byte) bool { return bytes.HasPrefix(head, []byte(magic)) }
}

func isWAV(head []byte) bool {
	if len(head) < 12 || string(head[8:12]) != "WAVE" {
		return false
	}
	switch string(head[:4]) {
	case "RIFF", "RF64", "BW64":
		return true
	case "RIFX":
		return true // big-endian WAV; the parser rejects it with a clear message
	}
	return false
}

func isAIFF(head []byte) bool {
	return len(head) >= 12 && string(head[:4]) == "FORM" && (string(head[8:12]) == "AIFF" || string(head[8:12]) == "AIFC")
}
