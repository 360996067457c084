package audio

import (
	"errors"
	"io"

	"github.com/jfreymuth/oggvorbis"
)

// vorbisSource decodes Ogg Vorbis through jfreymuth/oggvorbis.
type vorbisSource struct {
	r      *oggvorbis.Reader
	closer io.Closer
	in     FileInfo
}

// newVorbisSource reads from r. frames is the length when the caller could
// find it (from the last page's granule position), else -1.
func newVorbisSource(r io.Reader, c io.Closer, frames int64) (s *vorbisSource, err error) {
	defer guard(&err, "Vorbis")
	vr, err := oggvorbis.NewReader(r)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errorf(ErrTruncated, "Ogg Vorbis file ends inside its headers")
		}
		return nil, errorf(ErrCorrupt, "cannot read Ogg Vorbis headers: %v", err)
	}
	if err := checkFormat(vr.SampleRate(), vr.Channels()); err != nil {
		return nil, err
	}
	s = &vorbisSource{r: vr, closer: c}
	s.in = FileInfo{Container: Ogg, Codec: "vorbis", SampleRate: vr.SampleRate(), Channels: vr.Channels()}
	s.in.setFrames(frames)
	return s, nil
}

func (s *vorbisSource) info() FileInfo { return s.in }
func (s *vorbisSource) Close() error   { return closeIf(s.closer) }

func (s *vorbisSource) read(dst []float32) (n int, err error) {
	defer guard(&err, "Vorbis")
	ch := s.in.Channels
	dst = dst[:len(dst)/ch*ch]
	for n == 0 {
		m, err := s.r.Read(dst)
		n = m / ch * ch // oggvorbis hands out whole frames
		if err != nil {
			if n > 0 {
				return n, nil // report the end on the next call
			}
			if errors.Is(err, io.EOF) {
				return 0, io.EOF
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return 0, errorf(ErrTruncated, "Ogg Vorbis stream is cut off")
			}
			return 0, errorf(ErrCorrupt, "Ogg Vorbis: %v", err)
		}
	}
	return n, nil
}
