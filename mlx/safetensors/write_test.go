package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWriteRoundTrip(t *testing.T) {
	dir := t.TempDir()
	vals := []float32{1, -2.5, float32(math.Inf(1)), 3e-40}
	ts := []Tensor{
		{Name: "z.f32", DType: F32, Shape: []int{2, 2}, Data: Float32Bytes(vals)},
		{Name: "a.u32", DType: U32, Shape: []int{3}, Data: Uint32Bytes([]uint32{1, 1 << 31, 7})},
		{Name: "m.bf16", DType: BF16, Shape: []int{2}, Data: []byte{0x80, 0x3f, 0x00, 0xc0}}, // 1.0, -2.0
		{Name: "h.f16", DType: F16, Shape: []int{1}, Data: []byte{0x00, 0x3c}},               // 1.0
		{Name: "empty", DType: F32, Shape: []int{0, 5}, Data: nil},
	}
	meta := map[string]string{"format": "mlx", "b": "2"}
	for _, unpadded := range []bool{false, true} {
		p := filepath.Join(dir, "t.safetensors")
		if err := WriteWith(p, ts, meta, WriteOptions{Unpadded: unpadded}); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(p)
		n := binary.LittleEndian.Uint64(raw)
		if padded := (8+n)%8 == 0; !unpadded && !padded {
			t.Errorf("padded header length %d leaves data unaligned", n)
		}
		if unpadded && raw[8+n-1] != '}' {
			t.Errorf("unpadded header ends in %q", raw[8+n-1])
		}
		f, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(f.Names(), []string{"a.u32", "empty", "h.f16", "m.bf16", "z.f32"}) {
			t.Errorf("names %v", f.Names())
		}
		if got, _ := f.Float32s("z.f32"); !slices.Equal(got, vals) {
			t.Errorf("f32 = %v", got)
		}
		if got, _ := f.Float32s("m.bf16"); !slices.Equal(got, []float32{1, -2}) {
			t.Errorf("bf16 = %v", got)
		}
		if got, _ := f.Float32s("h.f16"); !slices.Equal(got, []float32{1}) {
			t.Errorf("f16 = %v", got)
		}
		if got, _ := f.Uint32s("a.u32"); !slices.Equal(got, []uint32{1, 1 << 31, 7}) {
			t.Errorf("u32 = %v", got)
		}
		if f.Metadata()["format"] != "mlx" {
			t.Errorf("metadata %v", f.Metadata())
		}
		dst := make([]byte, 12)
		if err := f.ReadInto("a.u32", dst); err != nil || dst[7] != 0x80 {
			t.Errorf("ReadInto: %v %v", dst, err)
		}
		f.Close()
	}
	// Deterministic: tensor order in the argument does not matter.
	var b1, b2 bytes.Buffer
	if err := Encode(&b1, ts, meta, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	rev := slices.Clone(ts)
	slices.Reverse(rev)
	if err := Encode(&b2, rev, meta, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Error("output depends on input order")
	}
	if err := Encode(&b1, []Tensor{{Name: "x", DType: F32, Shape: []int{2}, Data: []byte{1}}}, nil, WriteOptions{}); err == nil {
		t.Error("size mismatch accepted")
	}
}

func TestHalfConversions(t *testing.T) {
	cases := []struct {
		h    uint16
		want float32
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0001, 5.960464477539063e-8},
		{0x03ff, 6.097555160522461e-5}, {0x0400, 6.103515625e-5}, {0x3555, 0.333251953125},
		{0x7c00, float32(math.Inf(1))}, {0xfc00, float32(math.Inf(-1))},
	}
	for _, c := range cases {
		if got := F16ToFloat32(c.h); got != c.want {
			t.Errorf("F16ToFloat32(%#04x) = %v, want %v", c.h, got, c.want)
		}
	}
	if got := F16ToFloat32(0x8000); got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("-0 half = %v", got)
	}
	if !math.IsNaN(float64(F16ToFloat32(0x7e00))) {
		t.Error("NaN half not NaN")
	}
	if BF16ToFloat32(0x3f80) != 1 || BF16ToFloat32(0x4049) != 3.140625 {
		t.Error("bf16 conversion wrong")
	}
}
