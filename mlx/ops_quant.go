package mlx

import (
	"fmt"
	"slices"
)

// MLX affine quantization. A float matrix [..., cols] is cut along cols into
// groups of groupSize; each group stores a scale s and bias b (in the
// weight's dtype) and each weight an unsigned bits-bit code q with
// w ≈ s*q + b. Codes are packed little-endian, least significant bits
// first, into a continuous bit stream of uint32 words: [..., cols*bits/32].
// This is byte-for-byte the layout of mlx.core.quantize and mlx-community
// checkpoints (for 3, 5 and 6 bits too).

// CheckQuantParams reports whether MLX supports the group size and bits.
func CheckQuantParams(groupSize, bits int) error {
	switch bits {
	case 2, 3, 4, 5, 6, 8:
	default:
		return fmt.Errorf("mlx: quantization bits must be 2, 3, 4, 5, 6 or 8, got %d", bits)
	}
	switch groupSize {
	case 32, 64, 128:
	default:
		return fmt.Errorf("mlx: quantization group size must be 32, 64 or 128, got %d", groupSize)
	}
	return nil
}

// Quantize quantizes w ([..., cols], float, cols divisible by groupSize)
// like mlx.core.quantize and returns the packed uint32 weights and the
// per-group scales and biases in w's dtype.
func Quantize(w *Array, groupSize, bits int) (wq, scales, biases *Array, err error) {
	be := backendOf("Quantize", w)
	if err := CheckQuantParams(groupSize, bits); err != nil {
		return nil, nil, nil, err
	}
	if len(w.shape) < 1 || !w.dtype.IsFloat() {
		return nil, nil, nil, fmt.Errorf("mlx.Quantize: need a float array with at least one axis, got %v", w)
	}
	cols := w.shape[len(w.shape)-1]
	if cols%groupSize != 0 {
		return nil, nil, nil, fmt.Errorf("mlx.Quantize: last axis %d is not a multiple of group size %d", cols, groupSize)
	}
	lead := w.shape[:len(w.shape)-1]
	wq = newArray(be, Uint32, append(append([]int(nil), lead...), cols*bits/32))
	scales = newArray(be, w.dtype, append(append([]int(nil), lead...), cols/groupSize))
	biases = newArray(be, w.dtype, append(append([]int(nil), lead...), cols/groupSize))
	if err := be.Quantize(w, groupSize, bits, wq, scales, biases); err != nil {
		Free(wq, scales, biases)
		return nil, nil, nil, err
	}
	return wq, scales, biases, nil
}

// quantCols checks packed/scales/biases shapes and returns the unpacked
// column count.
func quantCols(op string, wq, scales, biases *Array, groupSize, bits int) int {
	if biases == nil {
		return mxCols(op, wq, scales, groupSize, bits)
	}
	if err := CheckQuantParams(groupSize, bits); err != nil {
		panic("mlx." + op + ": " + err.Error())
	}
	if wq.dtype != Uint32 || len(wq.shape) < 1 {
		panic(fmt.Sprintf("mlx.%s: packed weights must be uint32, got %v", op, wq))
	}
	cols := wq.shape[len(wq.shape)-1] * 32 / bits
	var buf [4]int // the expected shape, on the stack for 2-D weights
	gs := append(append(buf[:0], wq.shape[:len(wq.shape)-1]...), cols/groupSize)
	if !slices.Equal(scales.shape, gs) || !slices.Equal(biases.shape, gs) || !scales.dtype.IsFloat() || biases.dtype != scales.dtype {
		panic(fmt.Sprintf("mlx.%s: scales %v / biases %v do not match packed %v (want %v)", op, scales, biases, wq.shape, slices.Clone(gs)))
	}
	return cols
}

// Dequantize expands packed weights to [..., cols] in the scales' dtype,
// each value computed as float32(s*q) + b with no fused multiply-add, which
// reproduces MLX bit for bit. With nil biases the weights are MXFP4 (see
// ops_quant_mx.go) and expand to float32, exactly.
func Dequantize(wq, scales, biases *Array, groupSize, bits int) *Array {
	be := backendOf("Dequantize", wq, scales, biases)
	cols := quantCols("Dequantize", wq, scales, biases, groupSize, bits)
	if biases == nil {
		return dequantizeMXFP4(be, wq, scales, cols)
	}
	out := newArray(be, scales.dtype, append(append([]int(nil), wq.shape[:len(wq.shape)-1]...), cols))
	be.Dequantize(wq, scales, biases, groupSize, bits, out)
	return out
}

// QuantizedMatmul multiplies x [..., K] by a 2-D quantized matrix
// (mlx.core.quantized_matmul). transpose=true: w is quantized [N, K]
// (QuantizedLinear's layout) and the result is x @ W^T; transpose=false: w
// is quantized [K, N] and the result is x @ W. Output [..., N] in x's dtype.
// Nil biases select MXFP4 (groups of 32, 4 bits, uint8 scales).
func QuantizedMatmul(x, wq, scales, biases *Array, transpose bool, groupSize, bits int) *Array {
	be := backendOf("QuantizedMatmul", x, wq, scales, biases)
	cols := quantCols("QuantizedMatmul", wq, scales, biases, groupSize, bits)
	if len(wq.shape) != 2 || len(x.shape) < 1 || !x.dtype.IsFloat() {
		panic(fmt.Sprintf("mlx.QuantizedMatmul: x %v must be float and w %v 2-D", x, wq.shape))
	}
	k, n := cols, wq.shape[0]
	if !transpose {
		k, n = wq.shape[0], cols
	}
	if x.shape[len(x.shape)-1] != k {
		panic(fmt.Sprintf("mlx.QuantizedMatmul: x %v does not match K=%d of w (transpose=%v)", x.shape, k, transpose))
	}
	var buf [4]int // newArray copies the shape
	shape := append(append(buf[:0], x.shape[:len(x.shape)-1]...), n)
	if biases == nil {
		return quantizedMatmulMXFP4(be, x, wq, scales, transpose, shape)
	}
	out := newArray(be, x.dtype, shape)
	be.QuantizedMatmul(x, wq, scales, biases, transpose, groupSize, bits, out)
	return out
}

// TakeQuantized is the quantized embedding lookup: it gathers the rows idx
// of a quantized [V, D] table and dequantizes only those, giving
// idx.shape + [D] in the scales' dtype.
func TakeQuantized(wq, scales, biases, idx *Array, groupSize, bits int) *Array {
	quantCols("TakeQuantized", wq, scales, biases, groupSize, bits)
	rq := Take(wq, idx, 0)
	rs := Take(scales, idx, 0)
	var rb *Array // nil for MXFP4
	if biases != nil {
		rb = Take(biases, idx, 0)
	}
	out := Dequantize(rq, rs, rb, groupSize, bits)
	Free(rq, rs, rb)
	return out
}
