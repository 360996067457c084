package audio

import (
	"bufio"
	"errors"
	"io"
	"os"

	"github.com/jfreymuth/oggvorbis"
)

// describe names a container the way a user knows it, for messages; an
// Ogg stream also names its codec.
func describe(c Container, codec string) string {
	f, ok := FormatOf(c)
	if !ok {
		return string(c)
	}
	if c == Ogg && codec != "" {
		return f.Name + " " + codec
	}
	return f.Name
}

// probe opens path and sniffs it. The file is left at offset 0.
func probe(path string) (f *os.File, c Container, head []byte, size int64, err error) {
	f, err = openAudio(path)
	if err != nil {
		return nil, "", nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", nil, 0, err
	}
	if st.IsDir() {
		f.Close()
		return nil, "", nil, 0, errorf(ErrUnknownFormat, "is a directory")
	}
	size = -1
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	head = make([]byte, SniffLen)
	n, err := io.ReadFull(f, head)
	head = head[:n]
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		f.Close()
		return nil, "", nil, 0, err
	}
	if n == 0 {
		f.Close()
		return nil, "", nil, 0, errorf(ErrEmpty, "file is empty (0 bytes)")
	}
	c = Sniff(head)
	if c == Unknown {
		f.Close()
		return nil, "", nil, 0, errorf(ErrUnknownFormat, "not a recognised audio file (expected %s)", FormatNames())
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, "", nil, 0, err
	}
	return f, c, head, size, nil
}

// oggCodec names the codec of an Ogg stream from the first packet, which
// begins right after the first page's segment table.
func oggCodec(head []byte) string {
	if len(head) < 27 {
		return "unknown"
	}
	p := 27 + int(head[26])
	if p >= len(head) {
		return "unknown"
	}
	pkt := head[p:]
	switch {
	case len(pkt) >= 7 && string(pkt[:7]) == "\x01vorbis":
		return "vorbis"
	case len(pkt) >= 8 && string(pkt[:8]) == "OpusHead":
		return "opus"
	case len(pkt) >= 5 && string(pkt[:5]) == "\x7fFLAC":
		return "flac"
	case len(pkt) >= 5 && string(pkt[:5]) == "Speex":
		return "speex"
	}
	return "unknown"
}

// openSource picks a decoder for path by its magic bytes.
func openSource(path string) (source, error) {
	f, c, head, size, err := probe(path)
	if err != nil {
		return nil, err
	}
	var s source
	switch c {
	case WAV:
		s, err = newWAVSource(f, f, size)
	case FLAC:
		s, err = newFLACSource(bufio.NewReaderSize(f, 64<<10), f)
	case MP3:
		var scan mpegScan
		if scan, err = scanMPEG(f); err == nil {
			if scan.first.layer != 3 {
				// MPEG Layer I/II (.mp2, broadcast archives): no Go decoder.
				f.Close()
				return openSystem(path, c, mpegLayerName(scan.first))
			}
			if _, err = f.Seek(0, io.SeekStart); err == nil {
				s, err = newMP3Source(bufio.NewReaderSize(f, 64<<10), f, scan)
			}
		}
	case Ogg:
		codec := oggCodec(head)
		if codec != "vorbis" {
			f.Close()
			return openSystem(path, c, describe(c, codec))
		}
		frames := vorbisLength(f)
		if _, err = f.Seek(0, io.SeekStart); err == nil {
			s, err = newVorbisSource(bufio.NewReaderSize(f, 64<<10), f, frames)
		}
	default:
		f.Close()
		return openSystem(path, c, describe(c, ""))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// vorbisLength reads the length from the last page's granule position, or
// returns -1.
func vorbisLength(f io.ReadSeeker) (n int64) {
	defer func() {
		if recover() != nil {
			n = -1
		}
	}()
	n, _, err := oggvorbis.GetLength(f)
	if err != nil || n < 0 {
		return -1
	}
	return n
}
