package audio

import (
	"encoding/binary"
	"errors"
	"io"

	gomp3 "github.com/hajimehoshi/go-mp3"
)

// mp3Source decodes MPEG-1/2/2.5 Layer III through go-mp3, which always
// yields 16-bit stereo; a mono file is read back from the left channel.
type mp3Source struct {
	dec       *gomp3.Decoder
	closer    io.Closer
	in        FileInfo
	truncated bool
	buf       []byte
	done      bool
	skip      int   // samples per channel still to drop at the start
	left      int64 // samples per channel still to deliver; -1 = no limit
}

// mp3DecoderDelay is the delay of the MP3 synthesis filterbank, in samples,
// which go-mp3 (like every decoder) adds in front of the audio. LAME's
// delay field does not include it.
const mp3DecoderDelay = 529

// gaplessTrim returns how many samples to drop at the start and how many
// to keep in all, when the file's LAME tag allows trimming it back to the
// original length.
func gaplessTrim(scan mpegScan) (skip int, keep int64, ok bool) {
	t := scan.tag
	keep = scan.samples - int64(t.delay) - int64(t.padding)
	if !t.gapless || keep <= 0 || t.padding < 0 {
		return 0, scan.samples, false
	}
	return t.delay + mp3DecoderDelay, keep, true
}

// onlyReader hides Seek: go-mp3 would otherwise walk the whole file at open
// and keep every frame offset, which Hark does not need.
type onlyReader struct{ io.Reader }

// newMP3Source decodes from r. scan is a header walk over the same file,
// used for the format, the length and to tell a cut file from a whole one
// (go-mp3 silently treats a cut final frame as the end).
func newMP3Source(r io.Reader, c io.Closer, scan mpegScan) (s *mp3Source, err error) {
	if scan.first.layer != 3 {
		return nil, errorf(ErrUnsupported, "%s is not supported (only Layer III, MP3)", mpegLayerName(scan.first))
	}
	defer guard(&err, "MP3")
	dec, err := gomp3.NewDecoder(onlyReader{r})
	if err != nil {
		return nil, errorf(ErrCorrupt, "cannot decode MP3: %v", err)
	}
	s = &mp3Source{dec: dec, closer: c, truncated: scan.truncated, left: -1}
	if scan.xing {
		// go-mp3 decodes the Xing/Info header frame as silence; it is
		// metadata, not audio.
		s.skip = scan.first.samples
	}
	if skip, keep, ok := gaplessTrim(scan); ok {
		s.skip += skip
		s.left = keep
	}
	s.in = mp3Info(scan)
	return s, nil
}

func mp3Info(scan mpegScan) FileInfo {
	in := FileInfo{Container: MP3, Codec: "mp3", SampleRate: scan.first.sampleRate, Channels: scan.first.channels}
	if scan.first.layer != 3 {
		in.Codec = []string{"", "mp1", "mp2", "mp3"}[scan.first.layer]
	}
	_, keep, _ := gaplessTrim(scan)
	in.setFrames(keep)
	return in
}

func mpegLayerName(h mpegHeader) string {
	return "MPEG-" + mpegVersionName(h.version) + " Layer " + []string{"", "I", "II", "III"}[h.layer] + " audio"
}

func mpegVersionName(v int) string {
	switch v {
	case 1:
		return "1"
	case 2:
		return "2"
	}
	return "2.5"
}

func (s *mp3Source) info() FileInfo { return s.in }
func (s *mp3Source) Close() error   { return closeIf(s.closer) }

func (s *mp3Source) read(dst []float32) (n int, err error) {
	if s.done {
		return 0, s.endErr()
	}
	defer guard(&err, "MP3")
	ch := s.in.Channels
	frames := len(dst) / ch
	if frames == 0 {
		return 0, nil
	}
	if cap(s.buf) < frames*4 {
		s.buf = make([]byte, frames*4)
	}
	buf := s.buf[:frames*4]
	m, err := io.ReadFull(s.dec, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, errorf(ErrCorrupt, "MP3 decoding failed: %v", err)
	}
	got := m / 4
	if s.skip > 0 {
		k := min(s.skip, got)
		s.skip -= k
		copy(buf, buf[4*k:m])
		got -= k
		if got == 0 && err == nil {
			return 0, nil
		}
	}
	if s.left >= 0 && int64(got) > s.left {
		got = int(s.left) // the encoder's padding at the end
		err = io.EOF
	}
	if s.left >= 0 {
		s.left -= int64(got)
	}
	le := binary.LittleEndian
	for i := 0; i < got; i++ {
		l := float32(int16(le.Uint16(buf[4*i:]))) / (1 << 15)
		if ch == 1 {
			dst[i] = l
			continue
		}
		dst[2*i] = l
		dst[2*i+1] = float32(int16(le.Uint16(buf[4*i+2:]))) / (1 << 15)
	}
	if err != nil {
		s.done = true
		if got == 0 {
			return 0, s.endErr()
		}
	}
	return got * ch, nil
}

func (s *mp3Source) endErr() error {
	if s.truncated {
		return errorf(ErrTruncated, "MP3 stream is cut off inside its last frame")
	}
	return io.EOF
}
