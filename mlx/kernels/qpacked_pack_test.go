package kernels

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// PackQ4Bytes from a checkpoint's bytes at every misalignment, with
// float32, bfloat16 or float16 scales, writes exactly what PackQ4 writes
// from the arrays those bytes hold (the 16-bit scales widened exactly).
func TestPackQ4BytesMatchesPackQ4(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, sh := range packedShapes {
		rows, cols, gs := sh[0], sh[1], sh[2]
		w, s, b, err := Quantize(randSlice(r, rows*cols), rows, cols, gs, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []ScaleFormat{ScaleF32, ScaleBF16, ScaleF16} {
			// The scales and biases PackQ4 sees are the stored ones widened.
			sb, s2 := metaBytes(s, f)
			bb, b2 := metaBytes(b, f)
			want := packFixture(t, w, s2, b2, rows, cols, gs)
			for off := range 4 {
				src := Q4Bytes{Weight: at(off, wordBytes(w)), Scales: at(off+1, sb), Biases: at(off+3, bb), Format: f, Rows: rows}
				dst := bytes.Repeat([]byte{0xa5}, PackedQ4Bytes(rows, cols, gs)) // padding rows must be cleared
				if _, err := PackQ4Bytes(src, cols, gs, dst); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(dst, want.Data) {
					t.Errorf("%v scales %d at offset %d: packed bytes differ from PackQ4's", sh, f, off)
				}
			}
		}
	}
	w, s, b, _ := Quantize(randSlice(r, 4*128), 4, 128, 64, 4)
	short := Q4Bytes{Weight: wordBytes(w)[1:], Scales: bytesOf(s), Biases: bytesOf(b), Rows: 4}
	if _, err := PackQ4Bytes(short, 128, 64, make([]byte, PackedQ4Bytes(4, 128, 64))); err == nil {
		t.Error("PackQ4Bytes took codes one byte short")
	}
}

// at returns a copy of data starting off bytes into a fresh buffer, so
// that it sits at that alignment.
func at(off int, data []byte) []byte {
	buf := make([]byte, off+len(data))
	copy(buf[off:], data)
	return buf[off:]
}

func wordBytes(w []uint32) []byte {
	out := make([]byte, 0, 4*len(w))
	for _, v := range w {
		out = binary.LittleEndian.AppendUint32(out, v)
	}
	return out
}

// metaBytes stores vs in format f, returning the stored bytes and the
// values they hold.
func metaBytes(vs []float32, f ScaleFormat) ([]byte, []float32) {
	var out []byte
	held := make([]float32, len(vs))
	for i, v := range vs {
		switch f {
		case ScaleF32:
			out, held[i] = binary.LittleEndian.AppendUint32(out, math.Float32bits(v)), v
		case ScaleBF16:
			h := uint16(math.Float32bits(v) >> 16) // truncated: any bf16 will do
			out, held[i] = binary.LittleEndian.AppendUint16(out, h), math.Float32frombits(uint32(h)<<16)
		case ScaleF16:
			h := f32ToF16Trunc(v)
			out, held[i] = binary.LittleEndian.AppendUint16(out, h), f16ToF32(h)
		}
	}
	return out, held
}

// f32ToF16Trunc is a crude float32 → binary16 (truncating, normal range
// only, which quantization scales of random [-1, 1) values are in).
func f32ToF16Trunc(v float32) uint16 {
	b := math.Float32bits(v)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	if exp <= 0 {
		return sign
	}
	return sign | uint16(exp)<<10 | uint16(b>>13&0x3ff)
}

// BenchmarkPackQ4Bytes packs a 0.5B model's MLP matrix from bf16-scaled
// checkpoint bytes at an odd offset into a buffer already faulted in: the
// loader's packing work without the kernel's page clearing.
func BenchmarkPackQ4Bytes(b *testing.B) {
	const rows, cols, gs = 4864, 896, 64
	r := rand.New(rand.NewPCG(43, 44))
	w, s, bi, err := Quantize(randSlice(r, rows*cols), rows, cols, gs, 4)
	if err != nil {
		b.Fatal(err)
	}
	sb, _ := metaBytes(s, ScaleBF16)
	bb, _ := metaBytes(bi, ScaleBF16)
	src := Q4Bytes{Weight: at(1, wordBytes(w)), Scales: at(3, sb), Biases: at(1, bb), Format: ScaleBF16, Rows: rows}
	dst := make([]byte, PackedQ4Bytes(rows, cols, gs))
	b.SetBytes(int64(len(dst)))
	for b.Loop() {
		if _, err := PackQ4Bytes(src, cols, gs, dst); err != nil {
			b.Fatal(err)
		}
	}
}
