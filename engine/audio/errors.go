package audio

import (
	"errors"
	"fmt"
)

// Error classes. Callers test them with errors.Is; the message shown to the
// user comes from the wrapping FileError, which adds the file name and detail.
var (
	// ErrUnknownFormat: the bytes do not look like any audio container.
	ErrUnknownFormat = errors.New("not a recognised audio file")
	// ErrUnsupported: a real audio file whose encoding Hark cannot decode.
	ErrUnsupported = errors.New("unsupported audio encoding")
	// ErrBadHeader: the header holds impossible values (0 channels, 0 Hz, ...).
	ErrBadHeader = errors.New("invalid audio header")
	// ErrCorrupt: the audio data cannot be decoded.
	ErrCorrupt = errors.New("corrupt audio data")
	// ErrTruncated: the file ends before the audio its header promises.
	// Samples decoded before the cut are still delivered.
	ErrTruncated = errors.New("file is truncated")
	// ErrEmpty: the file is valid but holds no samples.
	ErrEmpty = errors.New("no audio samples")
	// ErrNeedsTool: decoding needs an external program that is not installed.
	ErrNeedsTool = errors.New("decoder not available")
)

// FileError is an error about one file. Its message is "PATH: detail".
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// fileErr wraps err with the path unless it already names a file.
func fileErr(path string, err error) error {
	if err == nil {
		return nil
	}
	var fe *FileError
	if errors.As(err, &fe) {
		return err
	}
	return &FileError{Path: path, Err: err}
}

// detail is an error of class kind with a specific message, so that
// errors.Is(err, kind) holds while the text says what exactly is wrong.
type detail struct {
	kind error
	msg  string
}

func (d *detail) Error() string { return d.msg }
func (d *detail) Unwrap() error { return d.kind }

func errorf(kind error, format string, a ...any) error {
	return &detail{kind: kind, msg: fmt.Sprintf(format, a...)}
}
