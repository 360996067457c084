package audio

import (
	"fmt"
	"io"
)

// FileInfo describes an audio file as found in its headers.
type FileInfo struct {
	File      string    `json:"file"`
	Container Container `json:"container"`
	// Format is the container as users know it (the formats table's Name).
	Format        string `json:"format"`
	Codec         string `json:"codec"`
	SampleRate    int    `json:"sample_rate"`
	Channels      int    `json:"channels"`
	BitsPerSample int    `json:"bits_per_sample,omitempty"`
	// Frames is the length in samples per channel; -1 when unknown
	// (a streamed WAV read from a pipe, for instance).
	Frames int64 `json:"frames"`
	// Duration in seconds; -1 when unknown.
	Duration float64 `json:"duration"`
}

func (in *FileInfo) setFrames(n int64) {
	in.Frames = n
	in.Duration = -1
	if n >= 0 && in.SampleRate > 0 {
		in.Duration = float64(n) / float64(in.SampleRate)
	}
}

// source is one decoder: interleaved float32 samples at the file's own rate
// and channel count.
type source interface {
	info() FileInfo
	// read fills dst with whole frames of interleaved samples (len(dst) is a
	// multiple of the channel count) and returns how many samples it wrote.
	// At the end it returns io.EOF, or ErrTruncated when the file was cut.
	read(dst []float32) (int, error)
	io.Closer
}

// Sane bounds for header values. Anything outside is a broken or hostile
// header, not a recording.
const (
	maxChannels   = 64
	minSampleRate = 1000 // below any real recording (telephony is 8 kHz)
	maxSampleRate = 1_536_000
)

func checkFormat(rate, channels int) error {
	if channels <= 0 || channels > maxChannels {
		return errorf(ErrBadHeader, "header says %d channels", channels)
	}
	if rate < minSampleRate || rate > maxSampleRate {
		return errorf(ErrBadHeader, "header says a sample rate of %d Hz", rate)
	}
	return nil
}

// guard turns a panic inside a third-party decoder into ErrCorrupt, so a
// malformed file can never take the app down.
func guard(err *error, what string) {
	if r := recover(); r != nil {
		*err = errorf(ErrCorrupt, "%s decoder failed on malformed data (%v)", what, r)
	}
}

func fmtChannels(n int) string {
	switch n {
	case 1:
		return "mono"
	case 2:
		return "stereo"
	}
	return fmt.Sprintf("%d channels", n)
}
