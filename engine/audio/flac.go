package audio

import (
	"errors"
	"io"

	"github.com/mewkiz/flac"
)

// flacSource decodes native FLAC of any bit depth through mewkiz/flac.
type flacSource struct {
	st     *flac.Stream
	closer io.Closer
	in     FileInfo
	pend   []float32 // decoded frame samples not yet handed out
	total  int64     // frames handed out
	done   error
}

func newFLACSource(r io.Reader, c io.Closer) (s *flacSource, err error) {
	defer guard(&err, "FLAC")
	st, err := flac.New(r)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errorf(ErrTruncated, "FLAC file ends inside its header")
		}
		return nil, errorf(ErrCorrupt, "cannot read FLAC header: %v", err)
	}
	si := st.Info
	if err := checkFormat(int(si.SampleRate), int(si.NChannels)); err != nil {
		return nil, err
	}
	if si.BitsPerSample < 4 || si.BitsPerSample > 32 {
		return nil, errorf(ErrBadHeader, "FLAC header says %d bits per sample", si.BitsPerSample)
	}
	s = &flacSource{st: st, closer: c}
	s.in = FileInfo{Container: FLAC, Codec: "flac", SampleRate: int(si.SampleRate), Channels: int(si.NChannels), BitsPerSample: int(si.BitsPerSample)}
	n := int64(si.NSamples)
	if n == 0 {
		n = -1 // unknown: FLAC writes 0 when it could not seek back
	}
	s.in.setFrames(n)
	return s, nil
}

func (s *flacSource) info() FileInfo { return s.in }
func (s *flacSource) Close() error   { return closeIf(s.closer) }

func (s *flacSource) read(dst []float32) (n int, err error) {
	ch := s.in.Channels
	for len(s.pend) == 0 {
		if s.done != nil {
			return 0, s.done
		}
		s.done = s.decodeFrame()
	}
	n = copy(dst[:len(dst)/ch*ch], s.pend)
	s.pend = s.pend[n:]
	s.total += int64(n / ch)
	return n, nil
}

// decodeFrame fills pend with the next frame; it returns the error that
// ends the stream once the frames run out.
func (s *flacSource) decodeFrame() (err error) {
	defer guard(&err, "FLAC")
	f, err := s.st.ParseNext()
	if err != nil {
		if errors.Is(err, io.EOF) {
			if s.in.Frames > 0 && s.total < s.in.Frames {
				return errorf(ErrTruncated, "FLAC stream ends after %d of %d samples", s.total, s.in.Frames)
			}
			return io.EOF
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return errorf(ErrTruncated, "FLAC stream is cut off inside a frame")
		}
		return errorf(ErrCorrupt, "FLAC frame: %v", err)
	}
	ch := s.in.Channels
	if len(f.Subframes) != ch {
		return errorf(ErrCorrupt, "FLAC frame has %d channels, stream has %d", len(f.Subframes), ch)
	}
	bs := int(f.BlockSize)
	bps := f.BitsPerSample
	if bps == 0 {
		bps = uint8(s.in.BitsPerSample)
	}
	scale := 1 / float32(uint64(1)<<(bps-1))
	if cap(s.pend) < bs*ch {
		s.pend = make([]float32, bs*ch)
	}
	p := s.pend[:bs*ch]
	for c, sf := range f.Subframes {
		if len(sf.Samples) < bs {
			return errorf(ErrCorrupt, "FLAC subframe has %d of %d samples", len(sf.Samples), bs)
		}
		for i, v := range sf.Samples[:bs] {
			p[i*ch+c] = float32(v) * scale
		}
	}
	s.pend = p
	return nil
}
