package safetensors

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// file builds raw file bytes from a header string and a data size.
func file(hdr string, dataLen int) []byte {
	b := make([]byte, 8+len(hdr)+dataLen)
	binary.LittleEndian.PutUint64(b, uint64(len(hdr)))
	copy(b[8:], hdr)
	return b
}

func parseBytes(b []byte) (*header, error) { return parseHeader("t.safetensors", b, int64(len(b))) }

func TestParseHeaderValid(t *testing.T) {
	h, err := parseBytes(file(`{"__metadata__":{"format":"pt"},"b":{"dtype":"F16","shape":[2,3],"data_offsets":[8,20]},"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"e":{"dtype":"F32","shape":[0,4],"data_offsets":[20,20]},"s":{"dtype":"I64","shape":[],"data_offsets":[20,28]}}    `, 28))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(h.names, ",") != "a,b,e,s" || h.metadata["format"] != "pt" {
		t.Fatalf("names %v metadata %v", h.names, h.metadata)
	}
	if b := h.tensors["b"]; b.Offset != h.dataOff+8 || b.Size != 12 || b.NumElements() != 6 {
		t.Errorf("b = %+v", b)
	}
	if s := h.tensors["s"]; s.NumElements() != 1 || len(s.Shape) != 0 {
		t.Errorf("scalar = %+v", s)
	}
}

func TestParseHeaderErrors(t *testing.T) {
	cases := []struct {
		name, hdr string
		data      int
		want      []string // substrings the error must contain
	}{
		{"not json", `{"a":`, 0, []string{"t.safetensors", "JSON"}},
		{"not object", `[1,2]`, 0, []string{"not a JSON object"}},
		{"unknown dtype", `{"w":{"dtype":"F7","shape":[1],"data_offsets":[0,1]}}`, 1, []string{`tensor "w"`, "unknown dtype"}},
		{"beyond file", `{"model.layers.0.mlp.up_proj.weight":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, 8,
			[]string{"t.safetensors", `tensor "model.layers.0.mlp.up_proj.weight"`, "data_offsets [0,16] beyond data size 8"}},
		{"size mismatch", `{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8, []string{`tensor "w"`, "needs 3×4"}},
		{"overlap", `{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}`, 6, []string{"overlaps"}},
		{"reversed", `{"w":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}}`, 4, []string{"increasing"}},
		{"negative dim", `{"w":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}}`, 0, []string{"invalid dimension"}},
		{"overflow", `{"w":{"dtype":"F64","shape":[2147483647,2147483647,2147483647],"data_offsets":[0,0]}}`, 0, []string{"overflow"}},
		{"missing field", `{"w":{"dtype":"U8","shape":[1]}}`, 1, []string{"needs dtype, shape and data_offsets"}},
		{"extra field", `{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1}}`, 1, []string{"unknown field"}},
		{"three offsets", `{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}`, 1, []string{"want 2"}},
		{"metadata not strings", `{"__metadata__":{"n":1}}`, 0, []string{"__metadata__"}},
		{"duplicate", `{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, 1, []string{"duplicate"}},
		{"trailing", `{} {}`, 0, []string{"trailing"}},
		{"float offsets", `{"w":{"dtype":"U8","shape":[1],"data_offsets":[0.5,1]}}`, 1, []string{`tensor "w"`}},
	}
	for _, c := range cases {
		_, err := parseBytes(file(c.hdr, c.data))
		if err == nil {
			t.Errorf("%s: parsed without error", c.name)
			continue
		}
		if !containsAll(err.Error(), c.want...) {
			t.Errorf("%s: error %q lacks %q", c.name, err, c.want)
		}
	}
	// A header length pointing past the end of the file.
	b := file(`{}`, 0)
	binary.LittleEndian.PutUint64(b, 1<<62)
	if _, err := parseBytes(b); err == nil || !strings.Contains(err.Error(), "exceeds file size") {
		t.Errorf("huge header length: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing.safetensors")); err == nil {
		t.Error("missing file opened")
	}
	if _, err := Open(dir); err == nil {
		t.Error("directory opened")
	}
	p := filepath.Join(dir, "x.safetensors")
	if err := Write(p, []Tensor{{Name: "w", DType: U8, Shape: []int{2}, Data: []byte{1, 2}}}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tensor("nope"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("missing tensor: %v", err)
	}
	if _, err := f.Float32s("w"); err == nil {
		t.Error("Float32s on U8 succeeded")
	}
	f.Close()
	if _, err := f.Bytes("w"); !errors.Is(err, ErrClosed) {
		t.Errorf("Bytes after Close: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestIndexErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.safetensors")
	if err := Write(p, []Tensor{{Name: "w", DType: U8, Shape: []int{1}, Data: []byte{1}}}, nil); err != nil {
		t.Fatal(err)
	}
	for name, idx := range map[string]string{
		"escape":  `{"weight_map":{"w":"../a.safetensors"}}`,
		"missing": `{"weight_map":{"v":"a.safetensors"}}`,
		"empty":   `{"weight_map":{}}`,
		"no file": `{"weight_map":{"w":"b.safetensors"}}`,
		"bad":     `{"weight_map":[]}`,
	} {
		ip := filepath.Join(dir, IndexName)
		if err := os.WriteFile(ip, []byte(idx), 0o644); err != nil {
			t.Fatal(err)
		}
		if s, err := OpenIndex(dir); err == nil {
			s.Close()
			t.Errorf("%s: index opened", name)
		}
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add(file(`{"__metadata__":{"format":"mlx"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}`, 16))
	f.Add(file(`{"a":{"dtype":"BF16","shape":[3],"data_offsets":[0,6]},"b":{"dtype":"U32","shape":[1],"data_offsets":[6,10]}}`, 10))
	f.Add(file(`{}`, 0))
	f.Add(file(`{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}`, 3)) // truncated data
	f.Add(file(`{"w":{"dtype":"F32"`, 0))                                       // truncated JSON
	f.Add([]byte{1, 2, 3})
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xffgarbage"))
	f.Add(file("\x00\x01{\"", 4))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseBytes(b)
		if err != nil {
			return
		}
		// Whatever parses must describe in-bounds, consistent ranges.
		for _, in := range h.tensors {
			if in.Offset < h.dataOff || in.Offset+in.Size > int64(len(b)) {
				t.Fatalf("tensor %q range [%d,%d) outside file of %d", in.Name, in.Offset, in.Offset+in.Size, len(b))
			}
			if in.NumElements()*int64(in.DType.Size()) != in.Size {
				t.Fatalf("tensor %q size %d inconsistent with shape %v", in.Name, in.Size, in.Shape)
			}
		}
	})
}
