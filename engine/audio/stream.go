package audio

import (
	"errors"
	"fmt"
	"io"
)

// SampleRate is Whisper's input rate, the default output of Stream.
const SampleRate = 16000

// Options choose what a Stream delivers.
type Options struct {
	// Channel 0 averages all channels into mono; k >= 1 keeps only channel
	// k (1-based), e.g. one speaker of a two-track interview.
	Channel int
	// SampleRate of the output; 0 means 16000.
	SampleRate int
}

// chunkFrames is how many source frames a Stream decodes at a time.
const chunkFrames = 8192

// Stream delivers a file as mono float32 PCM at the requested rate, chunk by
// chunk, with memory that does not depend on the file's length.
type Stream struct {
	path string
	src  source
	in   FileInfo
	ch   int // 0 = mix, else the 1-based channel to keep
	rs   *resampler

	ibuf      []float32 // interleaved source samples
	mono      []float32
	outBuf    []float32 // output of the last chunk; reused
	outPos    int       // how much of outBuf was handed out
	frames    int64     // source frames decoded
	end       error     // why the source stopped (io.EOF or a failure)
	zeroReads int       // reads that returned nothing, to catch a stuck decoder
	pos       int64     // output samples handed out
}

// Open starts decoding path. The container is recognised by its content.
func Open(path string, opt Options) (*Stream, error) {
	if opt.SampleRate == 0 {
		opt.SampleRate = SampleRate
	}
	if opt.SampleRate < 0 || opt.SampleRate > maxSampleRate {
		return nil, fileErr(path, fmt.Errorf("output sample rate %d Hz is out of range", opt.SampleRate))
	}
	src, err := openSource(path)
	if err != nil {
		return nil, fileErr(path, err)
	}
	in := src.info()
	in.File = path
	if opt.Channel < 0 || opt.Channel > in.Channels {
		src.Close()
		return nil, fileErr(path, fmt.Errorf("channel %d requested but the file has %d (%s)", opt.Channel, in.Channels, fmtChannels(in.Channels)))
	}
	s := &Stream{path: path, src: src, in: in, ch: opt.Channel}
	if in.SampleRate != opt.SampleRate {
		s.rs = newResampler(in.SampleRate, opt.SampleRate)
	}
	s.ibuf = make([]float32, chunkFrames*in.Channels)
	s.mono = make([]float32, 0, chunkFrames)
	return s, nil
}

// Info is the file's own format, as found when it was opened.
func (s *Stream) Info() FileInfo { return s.in }

// Pos is how many output samples Next has handed out so far; divided by
// the output rate it is the position in seconds (for progress).
func (s *Stream) Pos() int64 { return s.pos }

// Next fills dst with the next samples and returns how many it wrote. At
// the end of the audio it returns 0, io.EOF. A file that is cut short
// yields every sample before the cut, then an error matching ErrTruncated.
func (s *Stream) Next(dst []float32) (n int, err error) {
	defer func() { s.pos += int64(n) }()
	for n < len(dst) {
		if s.outPos < len(s.outBuf) {
			k := copy(dst[n:], s.outBuf[s.outPos:])
			s.outPos += k
			n += k
			continue
		}
		if s.end != nil {
			if n > 0 {
				return n, nil
			}
			return 0, s.end
		}
		s.fill()
	}
	return n, nil
}

// fill decodes one chunk into outBuf, or records the end.
func (s *Stream) fill() {
	k, err := s.src.read(s.ibuf)
	ch := s.in.Channels
	frames := k / ch
	s.frames += int64(frames)
	s.mono = s.mono[:frames]
	src := s.ibuf[:frames*ch]
	switch {
	case ch == 1:
		copy(s.mono, src)
	case s.ch > 0:
		for i := range s.mono {
			s.mono[i] = src[i*ch+s.ch-1]
		}
	default:
		inv := 1 / float32(ch)
		for i := range s.mono {
			var sum float32
			for _, v := range src[i*ch : (i+1)*ch] {
				sum += v
			}
			s.mono[i] = sum * inv
		}
	}
	sanitize(s.mono)
	s.outBuf, s.outPos = s.outBuf[:0], 0
	if s.rs == nil {
		s.outBuf = append(s.outBuf, s.mono...)
	} else {
		s.rs.push(s.mono)
		if err != nil {
			s.rs.finish()
		}
		s.outBuf = s.rs.pull(s.outBuf)
	}
	if err == nil {
		if frames == 0 {
			s.zeroReads++
			if s.zeroReads > 1000 {
				s.end = fileErr(s.path, errorf(ErrCorrupt, "decoder makes no progress"))
			}
		}
		return
	}
	switch {
	case errors.Is(err, io.EOF) && s.frames == 0:
		s.end = fileErr(s.path, errorf(ErrEmpty, "the file holds no audio samples"))
	case errors.Is(err, io.EOF):
		s.end = io.EOF
	default:
		s.end = fileErr(s.path, err)
	}
}

// sanitize clamps samples to [-1, 1] and silences NaN, which float WAVs
// and float decoders can carry. Whisper's own loader clamps the same way
// (it goes through 16-bit PCM), and one NaN would poison a whole window's
// log-mel.
func sanitize(x []float32) {
	for i, v := range x {
		switch {
		case v != v:
			x[i] = 0
		case v > 1:
			x[i] = 1
		case v < -1:
			x[i] = -1
		}
	}
}

// Close releases the file (and stops ffmpeg, if one is running).
func (s *Stream) Close() error { return s.src.Close() }

// Decode reads a whole file into memory as mono float32 at the requested
// rate (16 kHz by default). For long recordings prefer Open and Next. A
// truncated file returns the samples before the cut together with an error
// matching ErrTruncated.
func Decode(path string, opt Options) ([]float32, error) {
	s, err := Open(path, opt)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rate := opt.SampleRate
	if rate == 0 {
		rate = SampleRate
	}
	var out []float32
	if f := s.in.Frames; f > 0 && f < 1<<31 {
		out = make([]float32, 0, f*int64(rate)/int64(s.in.SampleRate)+64)
	}
	buf := make([]float32, 1<<15)
	for {
		n, err := s.Next(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}
