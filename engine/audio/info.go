package audio

import (
	"errors"
	"io"
)

// Info describes the audio file at path from its headers, without
// decoding it where the format allows (MP3 needs a walk over its frame
// headers; a FLAC file that does not state its length is decoded to count).
//
// A file whose header promises more audio than it holds returns the FileInfo it
// could read together with an error matching ErrTruncated; an empty one an
// error matching ErrEmpty. Every error names the file.
func Info(path string) (FileInfo, error) {
	in, err := readInfo(path)
	in.File = path
	if f, ok := FormatOf(in.Container); ok {
		in.Format = f.Name
	}
	return in, fileErr(path, err)
}

func readInfo(path string) (FileInfo, error) {
	f, c, head, size, err := probe(path)
	if err != nil {
		return FileInfo{}, err
	}
	defer f.Close()
	switch c {
	case WAV:
		s, err := newWAVSource(f, nil, size)
		if err != nil {
			return FileInfo{}, err
		}
		return s.in, firstErr(s.truncation(size), emptyErr(s.in))
	case MP3:
		scan, err := scanMPEG(f)
		if err != nil {
			return FileInfo{Container: MP3}, err
		}
		in := mp3Info(scan)
		if scan.truncated {
			return in, errorf(ErrTruncated, "MP3 stream is cut off inside its last frame")
		}
		return in, nil
	case FLAC:
		s, err := openSource(path)
		if err != nil {
			return FileInfo{}, err
		}
		defer s.Close()
		in := s.info()
		if in.Frames < 0 {
			n, err := countFrames(s)
			in.setFrames(n)
			if err != nil {
				return in, err
			}
		}
		return in, emptyErr(in)
	case Ogg:
		codec := oggCodec(head)
		if codec != "vorbis" {
			return systemInfo(path, c, describe(c, codec))
		}
		s, err := openSource(path)
		if err != nil {
			return FileInfo{}, err
		}
		defer s.Close()
		return s.info(), emptyErr(s.info())
	case MP4:
		if in, err := mp4Info(f); err == nil {
			return in, emptyErr(in)
		}
	}
	in, err := systemInfo(path, c, describe(c, ""))
	if err != nil {
		return in, err
	}
	return in, emptyErr(in)
}

// countFrames decodes a source to the end and counts its frames.
func countFrames(s source) (int64, error) {
	ch := s.info().Channels
	buf := make([]float32, 8192*ch)
	var n int64
	for {
		k, err := s.read(buf)
		n += int64(k / ch)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func emptyErr(in FileInfo) error {
	if in.Frames == 0 {
		return errorf(ErrEmpty, "the file holds no audio samples")
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
