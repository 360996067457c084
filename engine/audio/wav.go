package audio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// WAVE format tags Hark decodes.
const (
	wavPCM        = 0x0001
	wavFloat      = 0x0003
	wavALaw       = 0x0006
	wavMuLaw      = 0x0007
	wavExtensible = 0xFFFE
)

// wavTagNames names common tags Hark does not decode, so the error can say
// what the file actually holds.
var wavTagNames = map[uint16]string{
	0x0002: "Microsoft ADPCM",
	0x0011: "IMA ADPCM",
	0x0031: "GSM 6.10",
	0x0050: "MPEG audio",
	0x0055: "MPEG Layer III (MP3)",
	0x00FF: "AAC",
	0x1610: "AAC (ADTS)",
	0x2000: "AC-3",
	0x674F: "Ogg Vorbis",
	0xF1AC: "FLAC",
}

// wavHeader is everything before the first sample of a WAV file.
type wavHeader struct {
	tag        uint16 // effective tag, after unwrapping WAVE_FORMAT_EXTENSIBLE
	channels   int
	rate       int
	bits       int   // container bits per sample: 8, 16, 24, 32 or 64
	blockAlign int   // bytes per frame
	dataSize   int64 // bytes of sample data, -1 when the writer did not know (streamed)
	dataOffset int64 // file offset of the first sample
}

func (h *wavHeader) codec() string {
	switch h.tag {
	case wavPCM:
		if h.bits == 8 {
			return "pcm_u8"
		}
		return fmt.Sprintf("pcm_s%dle", h.bits)
	case wavFloat:
		return fmt.Sprintf("pcm_f%dle", h.bits)
	case wavALaw:
		return "pcm_alaw"
	case wavMuLaw:
		return "pcm_mulaw"
	}
	return fmt.Sprintf("wav tag 0x%04x", h.tag)
}

// Limits that tell a hostile header from a real one.
const maxFmtChunk = 1 << 12

// parseWAV reads a RIFF/RF64 WAVE header up to the start of the data chunk.
// Chunks other than fmt, ds64 and data (LIST, fact, bext, JUNK, ...) are
// skipped, honouring the pad byte after odd-sized chunks.
func parseWAV(r io.Reader) (*wavHeader, error) {
	var pos int64
	read := func(b []byte, what string) error {
		n, err := io.ReadFull(r, b)
		pos += int64(n)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return errorf(ErrTruncated, "WAV file ends inside the %s", what)
			}
			return err
		}
		return nil
	}
	var riff [12]byte
	if err := read(riff[:], "RIFF header"); err != nil {
		return nil, err
	}
	id := string(riff[:4])
	if id == "RIFX" {
		return nil, errorf(ErrUnsupported, "big-endian WAV (RIFX) is not supported")
	}
	if (id != "RIFF" && id != "RF64" && id != "BW64") || string(riff[8:12]) != "WAVE" {
		return nil, errorf(ErrUnknownFormat, "not a RIFF/WAVE file")
	}
	rf64 := id != "RIFF"
	var ds64Data int64 = -1
	var h *wavHeader
	var chunk [8]byte
	for {
		n, err := io.ReadFull(r, chunk[:])
		pos += int64(n)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, err
			}
			if h == nil {
				return nil, errorf(ErrCorrupt, "WAV file has no fmt chunk")
			}
			return nil, errorf(ErrEmpty, "WAV file has no data chunk")
		}
		cid := string(chunk[:4])
		size := int64(binary.LittleEndian.Uint32(chunk[4:]))
		switch cid {
		case "fmt ":
			if size < 16 || size > maxFmtChunk {
				return nil, errorf(ErrBadHeader, "WAV fmt chunk is %d bytes", size)
			}
			buf := make([]byte, size+size&1)
			if err := read(buf[:size], "fmt chunk"); err != nil {
				return nil, err
			}
			if size&1 == 1 {
				if err := read(buf[size:], "fmt chunk"); err != nil {
					return nil, err
				}
			}
			if h, err = parseFmt(buf[:size]); err != nil {
				return nil, err
			}
		case "ds64":
			if size < 24 || size > maxFmtChunk {
				return nil, errorf(ErrBadHeader, "RF64 ds64 chunk is %d bytes", size)
			}
			buf := make([]byte, size+size&1)
			if err := read(buf, "ds64 chunk"); err != nil {
				return nil, err
			}
			if v := binary.LittleEndian.Uint64(buf[8:16]); v < math.MaxInt64 {
				ds64Data = int64(v)
			}
		case "data":
			if h == nil {
				return nil, errorf(ErrUnsupported, "WAV data chunk comes before the fmt chunk")
			}
			h.dataOffset = pos
			switch {
			case size == 0xFFFFFFFF && rf64 && ds64Data >= 0:
				h.dataSize = ds64Data
			case size == 0xFFFFFFFF || size == 0:
				// Written by a recorder that never came back to fill in
				// the size: the samples run to the end of the file.
				h.dataSize = -1
			default:
				h.dataSize = size
			}
			return h, nil
		default:
			if err := skip(r, size+size&1); err != nil {
				return nil, errorf(ErrTruncated, "WAV file ends inside a %q chunk, before any audio data", cid)
			}
			pos += size + size&1
		}
	}
}

// parseFmt validates a fmt chunk body.
func parseFmt(b []byte) (*wavHeader, error) {
	le := binary.LittleEndian
	h := &wavHeader{
		tag:        le.Uint16(b[0:]),
		channels:   int(le.Uint16(b[2:])),
		rate:       int(le.Uint32(b[4:])),
		blockAlign: int(le.Uint16(b[12:])),
		bits:       int(le.Uint16(b[14:])),
	}
	if h.tag == wavExtensible {
		if len(b) < 40 {
			return nil, errorf(ErrBadHeader, "WAVE_FORMAT_EXTENSIBLE fmt chunk is only %d bytes", len(b))
		}
		// The first two bytes of the sub-format GUID are the real tag.
		h.tag = le.Uint16(b[24:])
	}
	if err := checkFormat(h.rate, h.channels); err != nil {
		return nil, err
	}
	switch h.tag {
	case wavPCM, wavFloat, wavALaw, wavMuLaw:
	default:
		name := wavTagNames[h.tag]
		if name == "" {
			name = "an unknown codec"
		}
		return nil, errorf(ErrUnsupported, "WAV holds %s (format tag 0x%04X); only PCM, float, A-law and µ-law WAV are supported", name, h.tag)
	}
	// The container size per sample is what blockAlign says; bitsPerSample
	// may be smaller (20-bit audio in 24-bit slots), so derive from it.
	if h.blockAlign == 0 || h.blockAlign%h.channels != 0 {
		return nil, errorf(ErrBadHeader, "WAV block size %d does not fit %d channels", h.blockAlign, h.channels)
	}
	bytesPer := h.blockAlign / h.channels
	if h.bits == 0 || h.bits > bytesPer*8 {
		return nil, errorf(ErrBadHeader, "WAV says %d bits per sample in %d-byte slots", h.bits, bytesPer)
	}
	h.bits = bytesPer * 8
	ok := false
	switch h.tag {
	case wavPCM:
		ok = bytesPer >= 1 && bytesPer <= 4
	case wavFloat:
		ok = bytesPer == 4 || bytesPer == 8
	case wavALaw, wavMuLaw:
		ok = bytesPer == 1
	}
	if !ok {
		return nil, errorf(ErrUnsupported, "WAV %s with %d-bit samples is not supported", h.codec(), h.bits)
	}
	return h, nil
}

// skip discards n bytes, seeking when it can so a huge junk chunk is free.
func skip(r io.Reader, n int64) error {
	if n == 0 {
		return nil
	}
	if s, ok := r.(io.Seeker); ok {
		cur, err := s.Seek(0, io.SeekCurrent)
		if err == nil {
			end, err := s.Seek(0, io.SeekEnd)
			if err == nil {
				if cur+n > end {
					s.Seek(end, io.SeekStart)
					return io.ErrUnexpectedEOF
				}
				_, err = s.Seek(cur+n, io.SeekStart)
				return err
			}
		}
	}
	m, err := io.CopyN(io.Discard, r, n)
	if m < n && err == nil {
		err = io.ErrUnexpectedEOF
	}
	return err
}
