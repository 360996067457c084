package safetensors

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
)

// Tensor is one tensor to write: raw little-endian data of the given
// dtype and shape.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// WriteOptions tunes the on-disk layout.
type WriteOptions struct {
	// Unpadded writes the JSON header without the trailing spaces that
	// align the data section to 8 bytes, as MLX does.
	Unpadded bool
}

// Write writes tensors and metadata to path in the Hugging Face layout:
// header keys and data in name order, __metadata__ first, header padded
// with spaces to a multiple of 8 bytes. The output depends only on the
// arguments (deterministic).
func Write(path string, tensors []Tensor, metadata map[string]string) error {
	return WriteWith(path, tensors, metadata, WriteOptions{})
}

// WriteWith is Write with layout options.
func WriteWith(path string, tensors []Tensor, metadata map[string]string, opt WriteOptions) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := Encode(w, tensors, metadata, opt); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Encode writes a safetensors stream to w.
func Encode(w io.Writer, tensors []Tensor, metadata map[string]string, opt WriteOptions) error {
	ts := slices.Clone(tensors)
	slices.SortFunc(ts, func(a, b Tensor) int { return cmp.Compare(a.Name, b.Name) })
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			hdr.WriteByte(',')
		}
		first = false
	}
	if len(metadata) > 0 {
		sep()
		hdr.WriteString(`"__metadata__":`)
		js, err := json.Marshal(metadata) // map keys come out sorted
		if err != nil {
			return err
		}
		hdr.Write(js)
	}
	var off int64
	for i, t := range ts {
		if i > 0 && ts[i-1].Name == t.Name {
			return fmt.Errorf("tensor %q given twice", t.Name)
		}
		if t.Name == "__metadata__" {
			return fmt.Errorf("tensor name %q is reserved", t.Name)
		}
		if !t.DType.Valid() {
			return fmt.Errorf("tensor %q: unknown dtype %q", t.Name, t.DType)
		}
		n := int64(t.DType.Size())
		for _, d := range t.Shape {
			if d < 0 {
				return fmt.Errorf("tensor %q: negative dimension in shape %v", t.Name, t.Shape)
			}
			n *= int64(d)
		}
		if n != int64(len(t.Data)) {
			return fmt.Errorf("tensor %q: %d data bytes, shape %v of %s needs %d", t.Name, len(t.Data), t.Shape, t.DType, n)
		}
		sep()
		name, _ := json.Marshal(t.Name)
		hdr.Write(name)
		hdr.WriteString(`:{"dtype":"` + string(t.DType) + `","shape":[`)
		for j, d := range t.Shape {
			if j > 0 {
				hdr.WriteByte(',')
			}
			hdr.WriteString(strconv.Itoa(d))
		}
		fmt.Fprintf(&hdr, `],"data_offsets":[%d,%d]}`, off, off+n)
		off += n
	}
	hdr.WriteByte('}')
	if !opt.Unpadded {
		for (8+hdr.Len())%8 != 0 {
			hdr.WriteByte(' ')
		}
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(hdr.Len()))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return err
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return err
	}
	for _, t := range ts {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}

// Float32Bytes encodes float32 values little-endian, for building Tensor.Data.
func Float32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Uint32Bytes encodes uint32 values little-endian.
func Uint32Bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}
