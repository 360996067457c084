package llm

import (
	"math"
	"testing"

	"hark/mlx"
	_ "hark/mlx/backends"
	"hark/mlx/mlxtest"
)

// The clamped SwiGLU against its formula in float64, on values well past
// the limit on both sides (the golden's random weights never reach it),
// from an interleaved gate/up row as Hugging Face's layout gives it. (The
// MXFP4 decoding is tested in package mlx, bit for bit.)
func TestClampedSwiGLU(t *testing.T) {
	mlxtest.NoLeaks(t)
	in := []float32{-20, -8, 9, 12, 0.5, -0.25, 7.5, -30, 3, 6.9, 100, -100}
	x := mlx.FromSlice(in, 1, 2, len(in)/2)
	defer x.Free()
	gate, up := deinterleave(x)
	y := clampedSwiGLU(gate, up, 7)
	defer mlx.Free(gate, up, y)
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
