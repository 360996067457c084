package safetensors

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
)

// maxHeaderLen bounds the JSON header so a corrupt length cannot make us
// allocate gigabytes; real headers are kilobytes to a few megabytes.
const maxHeaderLen = 100 << 20

// Info describes one tensor as declared in the header.
type Info struct {
	Name  string
	DType DType
	Shape []int
	// Offset is the absolute byte offset of the data in the file, Size its
	// length in bytes (= product(Shape) * DType.Size()).
	Offset int64
	Size   int64
}

// NumElements is the product of the shape (1 for a scalar).
func (i Info) NumElements() int64 {
	n := int64(1)
	for _, d := range i.Shape {
		n *= int64(d)
	}
	return n
}

// header is a parsed, validated safetensors header.
type header struct {
	tensors  map[string]Info
	names    []string // sorted
	metadata map[string]string
	dataOff  int64 // absolute offset of the data section (8 + header length)
}

// rawEntry is one tensor's header object; unknown fields are rejected.
type rawEntry struct {
	DType       *string  `json:"dtype"`
	Shape       *[]int64 `json:"shape"`
	DataOffsets *[]int64 `json:"data_offsets"`
}

// parseHeader validates the header of a file of fileSize bytes whose first
// bytes are prefix (at least the 8-byte length plus the JSON, when the
// file is that long). name labels errors.
func parseHeader(name string, prefix []byte, fileSize int64) (*header, error) {
	if fileSize < 8 || len(prefix) < 8 {
		return nil, fmt.Errorf("%s: file is %d bytes, too short for the 8-byte header length", name, fileSize)
	}
	n := binary.LittleEndian.Uint64(prefix[:8])
	if n > uint64(fileSize-8) {
		return nil, fmt.Errorf("%s: header length %d exceeds file size %d (truncated or not a safetensors file)", name, n, fileSize)
	}
	if n > maxHeaderLen {
		return nil, fmt.Errorf("%s: header length %d exceeds the %d-byte limit", name, n, maxHeaderLen)
	}
	if uint64(len(prefix)) < 8+n {
		return nil, fmt.Errorf("%s: header needs %d bytes, only %d available", name, 8+n, len(prefix))
	}
	h := &header{tensors: map[string]Info{}, dataOff: int64(8 + n)}
	dataLen := fileSize - h.dataOff
	if err := h.decodeJSON(name, prefix[8:8+n], dataLen); err != nil {
		return nil, err
	}
	if err := h.checkOverlaps(name); err != nil {
		return nil, err
	}
	return h, nil
}

// decodeJSON walks the top-level object token by token so duplicate keys
// and trailing garbage are caught (encoding/json into a map would silently
// keep the last duplicate).
func (h *header) decodeJSON(name string, js []byte, dataLen int64) error {
	// HF pads the header with trailing spaces to an 8-byte boundary.
	js = bytes.TrimRight(js, " \t\r\n\x00")
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%s: header is not JSON: %w", name, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("%s: header is not a JSON object", name)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%s: header JSON: %w", name, err)
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("%s: header JSON: expected a key, got %v", name, tok)
		}
		if seen[key] {
			return fmt.Errorf("%s: header has duplicate key %q", name, key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("%s: header JSON at key %q: %w", name, key, err)
		}
		if key == "__metadata__" {
			if err := strictUnmarshal(raw, &h.metadata); err != nil {
				return fmt.Errorf("%s: __metadata__ must be a map of strings: %w", name, err)
			}
			continue
		}
		info, err := parseEntry(key, raw, dataLen)
		if err != nil {
			return fmt.Errorf("%s: tensor %q: %w", name, key, err)
		}
		info.Offset += h.dataOff
		h.tensors[key] = info
		h.names = append(h.names, key)
	}
	if _, err := dec.Token(); err != nil { // closing '}'
		return fmt.Errorf("%s: header JSON: %w", name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s: header has trailing data after the JSON object", name)
	}
	slices.Sort(h.names)
	return nil
}

// strictUnmarshal decodes one JSON value rejecting unknown fields.
func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// parseEntry validates one tensor object against a data section of dataLen
// bytes; the returned Offset is still relative to the data section.
func parseEntry(key string, raw []byte, dataLen int64) (Info, error) {
	var e rawEntry
	if err := strictUnmarshal(raw, &e); err != nil {
		return Info{}, fmt.Errorf("bad header entry: %w", err)
	}
	if e.DType == nil || e.Shape == nil || e.DataOffsets == nil {
		return Info{}, errors.New("header entry needs dtype, shape and data_offsets")
	}
	dt := DType(*e.DType)
	if !dt.Valid() {
		return Info{}, fmt.Errorf("unknown dtype %q", *e.DType)
	}
	offs := *e.DataOffsets
	if len(offs) != 2 {
		return Info{}, fmt.Errorf("data_offsets has %d values, want 2", len(offs))
	}
	begin, end := offs[0], offs[1]
	if begin < 0 || end < begin {
		return Info{}, fmt.Errorf("data_offsets [%d,%d] are not an increasing pair", begin, end)
	}
	if end > dataLen {
		return Info{}, fmt.Errorf("data_offsets [%d,%d] beyond data size %d (file truncated?)", begin, end, dataLen)
	}
	shape := make([]int, len(*e.Shape))
	count := uint64(1)
	for i, d := range *e.Shape {
		if d < 0 || d > math.MaxInt32 {
			return Info{}, fmt.Errorf("shape %v has an invalid dimension %d", *e.Shape, d)
		}
		shape[i] = int(d)
		hi, lo := bits.Mul64(count, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return Info{}, fmt.Errorf("shape %v overflows", *e.Shape)
		}
		count = lo
	}
	hi, want := bits.Mul64(count, uint64(dt.Size()))
	if hi != 0 || want != uint64(end-begin) {
		return Info{}, fmt.Errorf("%d bytes at data_offsets [%d,%d], but shape %v of %s needs %d×%d", end-begin, begin, end, shape, dt, count, dt.Size())
	}
	return Info{Name: key, DType: dt, Shape: shape, Offset: begin, Size: end - begin}, nil
}

// checkOverlaps rejects tensors whose byte ranges intersect; empty tensors
// occupy no bytes and never overlap.
func (h *header) checkOverlaps(name string) error {
	infos := make([]Info, 0, len(h.tensors))
	for _, in := range h.tensors {
		if in.Size > 0 {
			infos = append(infos, in)
		}
	}
	slices.SortFunc(infos, func(a, b Info) int {
		return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Name, b.Name))
	})
	for i := 1; i < len(infos); i++ {
		p, c := infos[i-1], infos[i]
		if c.Offset < p.Offset+p.Size {
			return fmt.Errorf("%s: tensor %q: data overlaps tensor %q", name, c.Name, p.Name)
		}
	}
	return nil
}

// ReadHeader reads and validates only the header of the safetensors file at
// path, never its tensor data, so summing the parameters of a 100 GB model
// reads megabytes. The tensors come back in name order.
func ReadHeader(path string) ([]Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	size := st.Size()
	var lenBuf [8]byte
	if _, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("%s: file is %d bytes, too short for the 8-byte header length", path, size)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > maxHeaderLen || n > uint64(max(size-8, 0)) {
		// parseHeader names the reason; it needs no more than the length.
		_, err := parseHeader(path, lenBuf[:], size)
		return nil, err
	}
	prefix := make([]byte, 8+n)
	copy(prefix, lenBuf[:])
	if _, err := io.ReadFull(f, prefix[8:]); err != nil {
		return nil, fmt.Errorf("%s: reading the header: %w", path, err)
	}
	h, err := parseHeader(path, prefix, size)
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(h.names))
	for _, name := range h.names {
		out = append(out, h.tensors[name])
	}
	return out, nil
}
