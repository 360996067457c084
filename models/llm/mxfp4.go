package llm

import (
	"math"

	"hark/mlx"
	"hark/models/nn"
)

// MXFP4 (OCP Microscaling, FP4 E2M1 elements): blocks of 32 values share
// one E8M0 scale 2^(s-127); each value is a 4-bit float, sign bit then two
// exponent bits and one mantissa bit, packed two to a byte with the first
// value in the low nibble. GPT-OSS ships its experts so, as
// name_blocks [..., rows, cols/32, 16] and name_scales [..., rows, cols/32].

// fp4Values are the sixteen E2M1 codes (code 8 is negative zero, which a
// Go constant cannot spell).
var fp4Values = [16]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6, float32(math.Copysign(0, -1)), -0.5, -1, -1.5, -2, -3, -4, -6}

// decodeMXFP4 expands blocks (16 bytes per block) and their scales into
// len(scales)*32 float32 values, in row order.
func decodeMXFP4(blocks, scales []uint8) []float32 {
	out := make([]float32, len(scales)*32)
	for b, s := range scales {
		// 2^(s-127) exactly; s = 255 is NaN in E8M0.
		mul := float32(math.Ldexp(1, int(s)-127))
		if s == 255 {
			mul = float32(math.NaN())
		}
		for j, by := range blocks[b*16 : b*16+16] {
			out[b*32+2*j] = fp4Values[by&15] * mul
			out[b*32+2*j+1] = fp4Values[by>>4] * mul
		}
	}
	return out
}

// expertWeight loads the experts' matrix name as [experts, in, out]: the
// float tensor Hugging Face's GPT-OSS class holds, or the released
// MXFP4 pair name_blocks/name_scales ([experts, out, in/32, 16] and
// [experts, out, in/32]), expanded to float. Neither is an error naming
// both.
func expertWeight(w *nn.Weights, name string, experts, in, out int) *mlx.Array {
	if w.Has(name) || !w.Has(name+"_blocks") {
		if !w.Has(name) {
			w.Failf("missing tensor %s (float) or %s_blocks and %s_scales (MXFP4)", name, name, name)
			return nil
		}
		return w.Array(name, experts, in, out)
	}
	if in%32 != 0 {
		w.Failf("%s_blocks: input size %d is not a multiple of MXFP4's 32-value blocks", name, in)
		return nil
	}
	blocks := w.Array(name+"_blocks", experts, out, in/32, 16)
	scales := w.Array(name+"_scales", experts, out, in/32)
	if blocks == nil || scales == nil {
		return nil // reported
	}
	if blocks.DType() != mlx.Uint8 || scales.DType() != mlx.Uint8 {
		w.Failf("%s_blocks/_scales must be uint8, got %v and %v", name, blocks.DType(), scales.DType())
		return nil
	}
	rows := mlx.FromSlice(decodeMXFP4(blocks.Uint8s(), scales.Uint8s()), experts, out, in)
	t := mlx.Transpose(rows, 0, 2, 1)
	rows.Free()
	w.Drop(scales)
	return w.Replace(blocks, t)
}
