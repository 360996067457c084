package mlx

import (
	"fmt"
	"math"
	"slices"
)

// MXFP4: MLX's quantization mode "mxfp4" (OCP Microscaling with FP4
// elements). A float matrix [..., cols] is cut along cols into blocks of
// 32 values that share one E8M0 scale 2^(s-127), stored as a uint8 s; each
// value is a 4-bit E2M1 float (sign, two exponent bits with bias 1, one
// mantissa bit). Codes pack eight to a uint32 word, the first value in the
// lowest bits: [..., cols/8] uint32 with scales [..., cols/32] uint8 and no
// biases. Byte for byte this is GPT-OSS's released *_blocks/*_scales pair
// (two values a byte, low nibble first, read as little-endian words) and
// mlx.core.quantize(w, 32, 4, mode="mxfp4").
//
// The package selects the mode by its arguments, as MLX does by its
// mode string: Dequantize, QuantizedMatmul, GatherQMM and TakeQuantized
// take nil biases (and uint8 scales, group size 32, 4 bits) for MXFP4.
const (
	MXFP4GroupSize = 32
	MXFP4Bits      = 4
)

// FP4E2M1 are the sixteen E2M1 code values (code 8 is negative zero).
var FP4E2M1 = [16]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6, float32(math.Copysign(0, -1)), -0.5, -1, -1.5, -2, -3, -4, -6}

// E8M0 is the value of an E8M0 scale byte: 2^(s-127) exactly (s = 0 gives
// 2^-127, a float32 subnormal), and NaN for s = 255 as the OCP format
// defines it.
func E8M0(s uint8) float32 {
	if s == 255 {
		return float32(math.NaN())
	}
	return float32(math.Ldexp(1, int(s)-127))
}

// DecodeMXFP4 expands packed MXFP4 words (8 codes each) with their block
// scales (one per 4 words) into dst, len(words)*8 float32 values in order.
// Every value is exact: an E2M1 value times a power of two.
func DecodeMXFP4(dst []float32, words []uint32, scales []uint8) {
	for b, s := range scales {
		mul := E8M0(s)
		for j, w := range words[4*b : 4*b+4] {
			o := dst[32*b+8*j : 32*b+8*j+8]
			for i := range o {
				o[i] = FP4E2M1[w>>(4*i)&15] * mul
			}
		}
	}
}

// MXFP4er is implemented by backends with MXFP4 kernels. The package has
// checked the shapes: wq [..., rows, cols/8] uint32 and scales
// [..., rows, cols/32] uint8; GatherQMMMXFP4 takes the normalised
// gather arguments of GatherMatmuler.GatherQMM. Without it the ops expand
// the matrices they use to float32 (one expert at a time in a gather) and
// multiply those.
type MXFP4er interface {
	DequantizeMXFP4(wq, scales, out *Array)
	QuantizedMatmulMXFP4(x, wq, scales *Array, transpose bool, out *Array)
	GatherQMMMXFP4(x, wq, scales, lhs, rhs *Array, transpose bool, out *Array)
}

// CheckQuantMode reports whether MLX supports the quantization mode with
// this group size and bits: "affine" (or "") as CheckQuantParams says, and
// "mxfp4" with groups of 32 and 4 bits only.
func CheckQuantMode(mode string, groupSize, bits int) error {
	switch mode {
	case "", "affine":
		return CheckQuantParams(groupSize, bits)
	case "mxfp4":
		if groupSize != MXFP4GroupSize || bits != MXFP4Bits {
			return fmt.Errorf("mlx: mxfp4 quantization has groups of 32 and 4 bits, got group size %d and %d bits", groupSize, bits)
		}
		return nil
	}
	return fmt.Errorf("mlx: quantization mode %q is not supported (affine, mxfp4)", mode)
}

// mxCols is quantCols for MXFP4 (nil biases).
func mxCols(op string, wq, scales *Array, groupSize, bits int) int {
	if err := CheckQuantMode("mxfp4", groupSize, bits); err != nil {
		panic("mlx." + op + ": " + err.Error() + " (nil biases select mxfp4)")
	}
	if wq.dtype != Uint32 || len(wq.shape) < 1 {
		panic(fmt.Sprintf("mlx.%s: packed weights must be uint32, got %v", op, wq))
	}
	cols := wq.shape[len(wq.shape)-1] * 8
	var buf [4]int
	gs := append(append(buf[:0], wq.shape[:len(wq.shape)-1]...), cols/MXFP4GroupSize)
	if !slices.Equal(scales.shape, gs) || scales.dtype != Uint8 {
		panic(fmt.Sprintf("mlx.%s: mxfp4 scales %v do not match packed %v (want uint8 %v)", op, scales, wq.shape, slices.Clone(gs)))
	}
	return cols
}

// QuantizeMXFP4 quantizes w ([..., cols], float, cols a multiple of 32)
// in MLX's mxfp4 mode: each block's scale is 2^round(log2(max|w|/6)),
// clamped to E8M0's range, and each value the E2M1 code nearest w/scale
// (ties to the even code, values beyond 6 saturate). It returns the packed
// uint32 words [..., cols/8] and uint8 scales [..., cols/32].
func QuantizeMXFP4(w *Array) (wq, scales *Array, err error) {
	be := backendOf("QuantizeMXFP4", w)
	if len(w.shape) < 1 || !w.dtype.IsFloat() {
		return nil, nil, fmt.Errorf("mlx.QuantizeMXFP4: need a float array with at least one axis, got %v", w)
	}
	cols := w.shape[len(w.shape)-1]
	if cols%MXFP4GroupSize != 0 {
		return nil, nil, fmt.Errorf("mlx.QuantizeMXFP4: last axis %d is not a multiple of 32", cols)
	}
	vals := w.Float32s()
	words := make([]uint32, len(vals)/8)
	sc := make([]uint8, len(vals)/MXFP4GroupSize)
	for b := range sc {
		blk := vals[32*b : 32*b+32]
		var amax float32
		for _, v := range blk {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		s := uint8(255)
		if !math.IsInf(float64(amax), 0) && !math.IsNaN(float64(amax)) {
			e := 0
			if amax > 0 {
				e = int(math.Round(math.Log2(float64(amax / 6))))
			} else {
				e = -127
			}
			s = uint8(min(max(e, -127), 127) + 127)
		}
		sc[b] = s
		mul := E8M0(s)
		for i, v := range blk {
			words[4*b+i/8] |= uint32(fp4Code(v/mul)) << (4 * (i % 8))
		}
	}
	lead := w.shape[:len(w.shape)-1]
	wq = newArray(be, Uint32, append(slices.Clone(lead), cols/8))
	be.FromHost(wq, words)
	scales = newArray(be, Uint8, append(slices.Clone(lead), cols/MXFP4GroupSize))
	be.FromHost(scales, sc)
	return wq, scales, nil
}

// fp4Code is the E2M1 code nearest x, ties to the even code (the one with
// mantissa bit 0), saturating at ±6; NaN gives 6.
func fp4Code(x float32) uint8 {
	if x != x {
		return 7
	}
	var sign uint8
	if math.Signbit(float64(x)) {
		sign, x = 8, -x
	}
	var c uint8
	switch {
	case x > 5:
		c = 7
	case x >= 3.5:
		c = 6
	case x > 2.5:
		c = 5
	case x >= 1.75:
		c = 4
	case x > 1.25:
		c = 3
	case x >= 0.75:
		c = 2
	case x > 0.25:
		c = 1
	}
	return sign | c
}

// dequantizeMXFP4 is Dequantize for nil biases: float32 [..., cols].
func dequantizeMXFP4(be Backend, wq, scales *Array, cols int) *Array {
	out := newArray(be, Float32, append(slices.Clone(wq.shape[:len(wq.shape)-1]), cols))
	if mx, ok := be.(MXFP4er); ok {
		mx.DequantizeMXFP4(wq, scales, out)
		return out
	}
	vals := make([]float32, out.Size())
	DecodeMXFP4(vals, wq.Uint32s(), scales.Uint8s())
	be.FromHost(out, vals)
	return out
}

// quantizedMatmulMXFP4 is QuantizedMatmul for nil biases.
func quantizedMatmulMXFP4(be Backend, x, wq, scales *Array, transpose bool, shape []int) *Array {
	if mx, ok := be.(MXFP4er); ok {
		out := newArray(be, x.dtype, shape)
		mx.QuantizedMatmulMXFP4(x, wq, scales, transpose, out)
		return out
	}
	w := dequantizeMXFP4(be, wq, scales, wq.shape[len(wq.shape)-1]*8)
	defer w.Free()
	xf := castTo(x, Float32)
	y := matmul("QuantizedMatmul", xf, w, transpose)
	if xf != x {
		xf.Free()
	}
	if x.dtype == Float32 {
		return y
	}
	defer y.Free()
	return AsType(y, x.dtype)
}
