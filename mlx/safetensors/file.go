package safetensors

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
)

// Source is what both a single File and a sharded Set offer: one flat
// namespace of tensors with lazy access to their data.
type Source interface {
	Names() []string
	Tensor(name string) (Info, error)
	View(name string) ([]byte, error)
	Bytes(name string) ([]byte, error)
	Float32s(name string) ([]float32, error)
	Close() error
}

var (
	_ Source = (*File)(nil)
	_ Source = (*Set)(nil)
)

// ErrNotFound is wrapped by lookups of a tensor name that does not exist.
var ErrNotFound = errors.New("tensor not found")

// ErrClosed is returned by accessors of a closed File.
var ErrClosed = errors.New("file is closed")

// File is one open safetensors file.
type File struct {
	path string
	hdr  *header

	mu     sync.RWMutex
	data   []byte // whole file (mapping or copy); nil after Close
	unmap  func() error
	closed bool
}

// Open maps path and validates its header. Tensor data is not read until
// accessed. The caller must Close the file; views returned by View are
// invalid after that.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer f.Close() // the mapping outlives the descriptor
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory (use OpenIndex for a model folder)", path)
	}
	size := st.Size()
	if size < 8 {
		return nil, fmt.Errorf("%s: file is %d bytes, too short for the 8-byte header length", path, size)
	}
	data, unmap, err := mapFile(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: map: %w", path, err)
	}
	hdr, err := parseHeader(path, data, size)
	if err != nil {
		_ = unmap()
		return nil, err
	}
	return &File{path: path, hdr: hdr, data: data, unmap: unmap}, nil
}

// Path is the path the file was opened with.
func (f *File) Path() string { return f.path }

// Names lists the tensor names in sorted order.
func (f *File) Names() []string { return slices.Clone(f.hdr.names) }

// Metadata is the header's __metadata__ map (nil when absent).
func (f *File) Metadata() map[string]string { return f.hdr.metadata }

// Tensor returns a tensor's header entry.
func (f *File) Tensor(name string) (Info, error) {
	in, ok := f.hdr.tensors[name]
	if !ok {
		return Info{}, fmt.Errorf("%s: tensor %q: %w", f.path, name, ErrNotFound)
	}
	in.Shape = slices.Clone(in.Shape)
	return in, nil
}

// View returns the tensor's raw little-endian bytes without copying. The
// slice aliases a read-only mapping: never write to it, and do not use it
// after Close. Its start is not necessarily aligned.
func (f *File) View(name string) ([]byte, error) {
	in, ok := f.hdr.tensors[name]
	if !ok {
		return nil, fmt.Errorf("%s: tensor %q: %w", f.path, name, ErrNotFound)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, fmt.Errorf("%s: tensor %q: %w", f.path, name, ErrClosed)
	}
	return f.data[in.Offset : in.Offset+in.Size : in.Offset+in.Size], nil
}

// Release tells the system this process is done with the tensor's bytes
// for now: the whole pages of the mapping inside them leave the process's
// resident set (on Linux; elsewhere it does nothing). The file stays
// mapped and a later View reads the same bytes again from the page cache
// or the disk, so releasing is always safe. A loader that copied a tensor
// calls it, so the mapped file and the copy are not both resident and a
// model's peak memory stays at about one copy of its weights.
func (f *File) Release(name string) {
	in, ok := f.hdr.tensors[name]
	if !ok {
		return
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return
	}
	releasePages(f.data[in.Offset : in.Offset+in.Size])
}

// Bytes returns a private copy of the tensor's raw bytes.
func (f *File) Bytes(name string) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	in, err := f.viewLocked(name)
	if err != nil {
		return nil, err
	}
	return slices.Clone(in), nil
}

// ReadInto copies the tensor's raw bytes into dst, which must be exactly
// the tensor's size: no allocation for callers that own their buffers.
func (f *File) ReadInto(name string, dst []byte) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	src, err := f.viewLocked(name)
	if err != nil {
		return err
	}
	if len(dst) != len(src) {
		return fmt.Errorf("%s: tensor %q: destination has %d bytes, tensor has %d", f.path, name, len(dst), len(src))
	}
	copy(dst, src)
	return nil
}

// Float32s decodes an F32, F16, BF16 or F64 tensor to a new []float32.
func (f *File) Float32s(name string) ([]float32, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	src, err := f.viewLocked(name)
	if err != nil {
		return nil, err
	}
	in := f.hdr.tensors[name]
	out, err := decodeFloat32s(in.DType, src)
	if err != nil {
		return nil, fmt.Errorf("%s: tensor %q: %w", f.path, name, err)
	}
	return out, nil
}

// Uint32s decodes a U32 tensor (MLX's packed quantized weights).
func (f *File) Uint32s(name string) ([]uint32, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	src, err := f.viewLocked(name)
	if err != nil {
		return nil, err
	}
	if dt := f.hdr.tensors[name].DType; dt != U32 {
		return nil, fmt.Errorf("%s: tensor %q: dtype %s, want U32", f.path, name, dt)
	}
	return decodeUint32s(src), nil
}

func (f *File) viewLocked(name string) ([]byte, error) {
	in, ok := f.hdr.tensors[name]
	if !ok {
		return nil, fmt.Errorf("%s: tensor %q: %w", f.path, name, ErrNotFound)
	}
	if f.closed {
		return nil, fmt.Errorf("%s: tensor %q: %w", f.path, name, ErrClosed)
	}
	return f.data[in.Offset : in.Offset+in.Size], nil
}

// Close releases the mapping. It waits for in-flight copies and is safe to
// call more than once.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	f.data = nil
	if err := f.unmap(); err != nil {
		return fmt.Errorf("%s: unmap: %w", f.path, err)
	}
	return nil
}
