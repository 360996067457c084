package llm

import (
	"math"
	"testing"

	"hark/mlx"
	_ "hark/mlx/backends"
	"hark/mlx/mlxtest"
)

// The clamped SwiGLU against its formula in float64, on values well past
// the limit on both sides (the golden's random weights never reach it).
func TestClampedSwiGLU(t *testing.T) {
	mlxtest.NoLeaks(t)
	in := []float32{-20, -8, 9, 12, 0.5, -0.25, 7.5, -30, 3, 6.9, 100, -100}
	x := mlx.FromSlice(in, 1, 2, len(in)/2)
	defer x.Free()
	y := clampedSwiGLU(x, 7)
	defer y.Free()
	got := y.Float32s()
	for r := 0; r < 2; r++ {
		for j := 0; j < len(in)/4; j++ {
			g := math.Min(float64(in[r*6+2*j]), 7)
			u := math.Max(math.Min(float64(in[r*6+2*j+1]), 7), -7)
			want := (u + 1) * g / (1 + math.Exp(-1.702*g))
			if d := math.Abs(float64(got[r*3+j]) - want); d > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("row %d pair %d: got %v, want %v", r, j, got[r*3+j], want)
			}
		}
	}
}

// MXFP4 decoding bit for bit against the format's definition, on blocks
// made by hand: every FP4 code in both nibbles, and scales from the
// smallest normal exponents to the largest.
func TestDecodeMXFP4(t *testing.T) {
	// E2M1: sign, 2 exponent bits (bias 1), 1 mantissa bit; exponent 0 is
	// subnormal (0.5 * mantissa).
	e2m1 := func(c uint8) float64 {
		sign := 1.0
		if c&8 != 0 {
			sign = -1
		}
		e, m := int(c>>1&3), float64(c&1)
		if e == 0 {
			return sign * 0.5 * m
		}
		return sign * math.Ldexp(1+0.5*m, e-1)
	}
	var blocks []uint8
	var scales []uint8
	for _, s := range []uint8{0, 1, 100, 126, 127, 128, 140, 254} {
		scales = append(scales, s)
		for j := 0; j < 16; j++ {
			blocks = append(blocks, uint8(j)|uint8(15-j)<<4)
		}
	}
	got := decodeMXFP4(blocks, scales)
	for b, s := range scales {
		for j := 0; j < 32; j++ {
			by := blocks[b*16+j/2]
			code := by & 15
			if j%2 == 1 {
				code = by >> 4
			}
			want := float32(e2m1(code) * math.Pow(2, float64(s)-127))
			if math.Float32bits(got[b*32+j]) != math.Float32bits(want) {
				t.Fatalf("block %d (scale %d) value %d: got %v (%#x), want %v (%#x)", b, s, j, got[b*32+j], math.Float32bits(got[b*32+j]), want, math.Float32bits(want))
			}
		}
	}
	if v := decodeMXFP4(make([]uint8, 16), []uint8{255})[0]; !math.IsNaN(float64(v)) {
		t.Errorf("scale 255 (E8M0 NaN) decoded to %v", v)
	}
}
