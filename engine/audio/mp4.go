package audio

import (
	"encoding/binary"
	"errors"
	"io"
	"strings"
)

// mp4Info reads an ISO BMFF (.m4a/.mp4/.mov) file's first sound track from
// its moov box: codec from the sample description, rate and channels from
// the audio sample entry, length from the media header. It decodes nothing,
// so `hark audio info` works on M4A even where no decoder is installed.
func mp4Info(r io.ReadSeeker) (FileInfo, error) {
	moov, err := findTopBox(r, "moov")
	if err != nil {
		return FileInfo{}, err
	}
	var movieScale uint64
	if mvhd := firstBox(moov, "mvhd"); len(mvhd) >= 16 && mvhd[0] == 0 {
		movieScale = uint64(binary.BigEndian.Uint32(mvhd[12:]))
	} else if len(mvhd) >= 24 && mvhd[0] == 1 {
		movieScale = uint64(binary.BigEndian.Uint32(mvhd[20:]))
	}
	for _, trak := range childBoxes(moov, "trak") {
		mdia := firstBox(trak, "mdia")
		hdlr := firstBox(mdia, "hdlr")
		if len(hdlr) < 12 || string(hdlr[8:12]) != "soun" {
			continue
		}
		in, ok := soundTrack(mdia)
		if !ok {
			return FileInfo{}, errorf(ErrCorrupt, "MP4 sound track has a malformed header")
		}
		// The edit list says which part of the media is presented: AAC
		// encoders prime the decoder with silence that the edit list
		// hides, and players (and ffprobe) report the edited length.
		if d, ok := editedDuration(firstBox(firstBox(trak, "edts"), "elst")); ok && movieScale > 0 {
			in.setFrames(int64(float64(d) * float64(in.SampleRate) / float64(movieScale)))
		}
		return in, checkFormat(in.SampleRate, in.Channels)
	}
	return FileInfo{}, errorf(ErrEmpty, "MP4 file has no sound track")
}

func soundTrack(mdia []byte) (FileInfo, bool) {
	in := FileInfo{Container: MP4}
	be := binary.BigEndian
	mdhd := firstBox(mdia, "mdhd")
	var timescale, duration uint64
	switch {
	case len(mdhd) >= 24 && mdhd[0] == 0:
		timescale, duration = uint64(be.Uint32(mdhd[12:])), uint64(be.Uint32(mdhd[16:]))
	case len(mdhd) >= 36 && mdhd[0] == 1:
		timescale, duration = uint64(be.Uint32(mdhd[20:])), be.Uint64(mdhd[24:])
	default:
		return in, false
	}
	stsd := firstBox(firstBox(firstBox(mdia, "minf"), "stbl"), "stsd")
	// stsd: version/flags, entry count, then sample entries; an audio entry
	// is size, type, 6 reserved, data ref index, 8 reserved, channels,
	// sample size, 4 reserved, rate as 16.16 fixed point.
	if len(stsd) < 8+36 {
		return in, false
	}
	e := stsd[8:]
	in.Codec = mp4Codec(string(e[4:8]))
	in.Channels = int(be.Uint16(e[24:]))
	in.BitsPerSample = 0
	in.SampleRate = int(be.Uint32(e[32:]) >> 16)
	if in.SampleRate == 0 && timescale > 0 && timescale <= maxSampleRate {
		in.SampleRate = int(timescale)
	}
	in.setFrames(-1)
	if timescale > 0 && in.SampleRate > 0 && duration != 0 && duration < 1<<53 {
		in.setFrames(int64(float64(duration) * float64(in.SampleRate) / float64(timescale)))
	}
	return in, true
}

// editedDuration sums the presented segments of an elst box, in the movie
// timescale. Empty edits (media time -1) are gaps and are not counted.
func editedDuration(elst []byte) (uint64, bool) {
	if len(elst) < 8 {
		return 0, false
	}
	be := binary.BigEndian
	v1 := elst[0] == 1
	n := int(be.Uint32(elst[4:]))
	entry := 12
	if v1 {
		entry = 20
	}
	b := elst[8:]
	if n <= 0 || n > len(b)/entry {
		return 0, false
	}
	var total uint64
	for i := range n {
		e := b[i*entry:]
		if v1 {
			if int64(be.Uint64(e[8:])) != -1 {
				total += be.Uint64(e)
			}
		} else if int32(be.Uint32(e[4:])) != -1 {
			total += uint64(be.Uint32(e))
		}
	}
	return total, total > 0
}

func mp4Codec(fourcc string) string {
	switch fourcc {
	case "mp4a":
		return "aac"
	case "alac":
		return "alac"
	case "ac-3":
		return "ac3"
	case "ec-3":
		return "eac3"
	case "Opus":
		return "opus"
	case "fLaC":
		return "flac"
	case ".mp3":
		return "mp3"
	}
	return strings.TrimSpace(fourcc)
}

// findTopBox walks top-level boxes and returns the body of the first box
// of the given type. mdat may come first and be huge, so boxes are skipped
// by seeking.
func findTopBox(r io.ReadSeeker, typ string) ([]byte, error) {
	const maxMoov = 64 << 20
	var hdr [16]byte
	for {
		if _, err := io.ReadFull(r, hdr[:8]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, errorf(ErrTruncated, "MP4 file has no %s box (cut off?)", typ)
			}
			return nil, err
		}
		size := int64(binary.BigEndian.Uint32(hdr[:4]))
		hlen := int64(8)
		switch size {
		case 1:
			if _, err := io.ReadFull(r, hdr[8:16]); err != nil {
				return nil, errorf(ErrTruncated, "MP4 box header is cut off")
			}
			size = int64(binary.BigEndian.Uint64(hdr[8:16]))
			hlen = 16
		case 0:
			if string(hdr[4:8]) != typ {
				return nil, errorf(ErrCorrupt, "MP4 file has no %s box", typ)
			}
			size = maxMoov + hlen // "to the end of the file"
		}
		if size < hlen {
			return nil, errorf(ErrCorrupt, "MP4 box %q has size %d", hdr[4:8], size)
		}
		if string(hdr[4:8]) == typ {
			if size-hlen > maxMoov {
				return nil, errorf(ErrBadHeader, "MP4 %s box of %d bytes", typ, size)
			}
			body, err := io.ReadAll(io.LimitReader(r, size-hlen))
			if err != nil {
				return nil, err
			}
			return body, nil
		}
		if err := skip(r, size-hlen); err != nil {
			return nil, errorf(ErrTruncated, "MP4 file ends inside a %q box", hdr[4:8])
		}
	}
}

// childBoxes returns the bodies of the direct children of type typ.
func childBoxes(b []byte, typ string) [][]byte {
	var out [][]byte
	for len(b) >= 8 {
		size := uint64(binary.BigEndian.Uint32(b))
		hlen := uint64(8)
		if size == 1 && len(b) >= 16 {
			size, hlen = binary.BigEndian.Uint64(b[8:]), 16
		} else if size == 0 {
			size = uint64(len(b))
		}
		if size < hlen || size > uint64(len(b)) {
			break
		}
		if string(b[4:8]) == typ {
			out = append(out, b[hlen:size])
		}
		b = b[size:]
	}
	return out
}

func firstBox(b []byte, typ string) []byte {
	if c := childBoxes(b, typ); len(c) > 0 {
		return c[0]
	}
	return nil
}
