package audio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
)

// wavSource streams samples out of a WAV data chunk.
type wavSource struct {
	h      *wavHeader
	r      io.Reader
	closer io.Closer
	left   int64 // bytes of data chunk still to read; -1 = until EOF
	got    int64 // bytes read so far
	buf    []byte
	tail   []byte // an incomplete frame carried to the next read
	in     FileInfo
}

// newWAVSource parses the header from r (left positioned at the first
// sample) and prepares to stream. size is the file size, or -1.
func newWAVSource(r io.Reader, c io.Closer, size int64) (*wavSource, error) {
	h, err := parseWAV(r)
	if err != nil {
		return nil, err
	}
	s := &wavSource{h: h, r: bufio.NewReaderSize(r, 64<<10), closer: c, left: h.dataSize}
	s.in = FileInfo{Container: WAV, Codec: h.codec(), SampleRate: h.rate, Channels: h.channels, BitsPerSample: h.bits}
	avail := int64(-1)
	if size >= 0 {
		avail = max(size-h.dataOffset, 0)
	}
	switch {
	case h.dataSize >= 0 && avail >= 0:
		s.in.setFrames(min(h.dataSize, avail) / int64(h.blockAlign))
	case h.dataSize >= 0:
		s.in.setFrames(h.dataSize / int64(h.blockAlign))
	case avail >= 0:
		s.in.setFrames(avail / int64(h.blockAlign))
	default:
		s.in.setFrames(-1)
	}
	return s, nil
}

// truncation reports whether the header promises more data than the file has.
func (s *wavSource) truncation(size int64) error {
	if size < 0 || s.h.dataSize < 0 {
		return nil
	}
	if have := size - s.h.dataOffset; have < s.h.dataSize {
		return errorf(ErrTruncated, "WAV data chunk says %d bytes but the file holds only %d", s.h.dataSize, max(have, 0))
	}
	return nil
}

func (s *wavSource) info() FileInfo { return s.in }
func (s *wavSource) Close() error   { return closeIf(s.closer) }

func (s *wavSource) read(dst []float32) (int, error) {
	ch, ba := s.h.channels, s.h.blockAlign
	frames := len(dst) / ch
	if frames == 0 {
		return 0, nil
	}
	// need counts bytes still to read from the file; the tail of an
	// incomplete frame from the last call was read already.
	need := int64(frames*ba - len(s.tail))
	if s.left >= 0 {
		need = min(need, s.left)
	}
	if need <= 0 {
		return 0, io.EOF // the data chunk is used up; a partial frame is dropped
	}
	size := len(s.tail) + int(need)
	if cap(s.buf) < size {
		s.buf = make([]byte, size)
	}
	buf := s.buf[:size]
	copy(buf, s.tail)
	m, err := io.ReadFull(s.r, buf[len(s.tail):])
	n := len(s.tail) + m
	s.got += int64(m)
	if s.left >= 0 {
		s.left -= int64(m)
	}
	whole := n / ba * ba
	if err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, err
		}
		err = nil
		if whole == 0 {
			s.tail = s.tail[:0]
			if s.left > 0 {
				return 0, errorf(ErrTruncated, "WAV data chunk says %d bytes but the file ends after %d", s.h.dataSize, s.got)
			}
			return 0, io.EOF
		}
	}
	s.tail = append(s.tail[:0], buf[whole:n]...)
	decodeWAVSamples(dst[:whole/ba*ch], buf[:whole], s.h)
	return whole / ba * ch, err
}

// decodeWAVSamples converts little-endian sample bytes to float32 in [-1, 1).
func decodeWAVSamples(dst []float32, b []byte, h *wavHeader) {
	le := binary.LittleEndian
	switch {
	case h.tag == wavPCM && h.bits == 8:
		for i := range dst {
			dst[i] = float32(int(b[i])-128) / 128
		}
	case h.tag == wavPCM && h.bits == 16:
		for i := range dst {
			dst[i] = float32(int16(le.Uint16(b[2*i:]))) / (1 << 15)
		}
	case h.tag == wavPCM && h.bits == 24:
		for i := range dst {
			v := int32(uint32(b[3*i])<<8|uint32(b[3*i+1])<<16|uint32(b[3*i+2])<<24) >> 8
			dst[i] = float32(v) / (1 << 23)
		}
	case h.tag == wavPCM && h.bits == 32:
		for i := range dst {
			dst[i] = float32(float64(int32(le.Uint32(b[4*i:]))) / (1 << 31))
		}
	case h.tag == wavFloat && h.bits == 32:
		for i := range dst {
			dst[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
	case h.tag == wavFloat && h.bits == 64:
		for i := range dst {
			dst[i] = float32(math.Float64frombits(le.Uint64(b[8*i:])))
		}
	case h.tag == wavMuLaw:
		for i := range dst {
			dst[i] = float32(muLaw(b[i])) / (1 << 15)
		}
	case h.tag == wavALaw:
		for i := range dst {
			dst[i] = float32(aLaw(b[i])) / (1 << 15)
		}
	}
}

// muLaw expands one G.711 µ-law byte to a 16-bit linear sample.
func muLaw(b byte) int {
	u := ^b
	mag := ((int(u&0x0F) << 3) + 0x84) << ((u >> 4) & 7)
	mag -= 0x84
	if u&0x80 != 0 {
		return -mag
	}
	return mag
}

// aLaw expands one G.711 A-law byte to a 16-bit linear sample.
func aLaw(b byte) int {
	a := b ^ 0x55
	exp := (a >> 4) & 7
	mag := int(a&0x0F) << 4
	if exp == 0 {
		mag += 8
	} else {
		mag = (mag + 0x108) << (exp - 1)
	}
	if a&0x80 != 0 {
		return mag
	}
	return -mag
}

func closeIf(c io.Closer) error {
	if c == nil {
		return nil
	}
	return c.Close()
}
