package kernels

import (
	"fmt"
	"math"
)

// Quantize converts w ([rows, cols], row-major) to MLX's affine format,
// matching mlx.core.quantize bit for bit: per group of groupSize values
// along cols it stores a float32 scale and bias and bits-wide codes q such
// that w ≈ scale*q + bias.
//
// MLX's rule: of the group's two extremes, the one with the larger
// magnitude ("edge") is represented exactly, which is why about half the
// scales come out negative (edge = max gives a negative step from it).
func Quantize(w []float32, rows, cols, groupSize, bits int) (packed []uint32, scales, biases []float32, err error) {
	if err := checkQuantParams(rows, cols, groupSize, bits); err != nil {
		return nil, nil, nil, err
	}
	if len(w) < rows*cols {
		return nil, nil, nil, fmt.Errorf("kernels: quantize input has %d values, want %d for [%d, %d]", len(w), rows*cols, rows, cols)
	}
	wpr := PackedCols(cols, bits)
	gpr := cols / groupSize
	packed = make([]uint32, rows*wpr)
	scales = make([]float32, rows*gpr)
	biases = make([]float32, rows*gpr)
	parallelFor(rows, 1, 16, func(lo, hi int) {
		codes := make([]uint8, cols)
		for r := lo; r < hi; r++ {
			row := w[r*cols : (r+1)*cols]
			for g := 0; g < gpr; g++ {
				s, b := quantizeGroup(row[g*groupSize:(g+1)*groupSize], bits, codes[g*groupSize:(g+1)*groupSize])
				scales[r*gpr+g], biases[r*gpr+g] = s, b
			}
			packRow(codes, bits, packed[r*wpr:(r+1)*wpr])
		}
	})
	return packed, scales, biases, nil
}

// quantizeGroup computes one group's scale, bias and codes. Every step is a
// single float32 operation so the rounding matches MLX's float arithmetic.
func quantizeGroup(g []float32, bits int, codes []uint8) (scale, bias float32) {
	nBins := float32(int(1)<<uint(bits) - 1)
	const eps = float32(1e-7)
	wMin, wMax := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, v := range g {
		// Same comparison semantics as std::max/std::min on floats.
		if wMax < v {
			wMax = v
		}
		if v < wMin {
			wMin = v
		}
	}
	minIsEdge := abs32(wMin) > abs32(wMax)
	scale = max((wMax-wMin)/nBins, eps)
	edge := wMax
	if minIsEdge {
		edge = wMin
	} else {
		scale = -scale
	}
	q0 := rint32(edge / scale)
	if q0 != 0 {
		// Re-derive the step so that edge == scale*q0 lands exactly.
		scale = edge / q0
		bias = edge
	}
	for i, v := range g {
		q := rint32((v - bias) / scale)
		q = min(max(q, 0), nBins)
		codes[i] = uint8(q)
	}
	return scale, bias
}

func abs32(x float32) float32 { return float32(math.Abs(float64(x))) }

// rint32 rounds half to even, like std::rint in the default rounding mode.
// Rounding the float64 widening is exact: float32 fits in float64.
func rint32(x float32) float32 { return float32(math.RoundToEven(float64(x))) }

// Dequantize expands MLX affine-quantized weights to float32 [rows, cols]
// in out, bit-identical to mlx.core.dequantize.
func Dequantize(packed []uint32, scales, biases []float32, rows, cols, groupSize, bits int, out []float32) error {
	if err := checkQuantParams(rows, cols, groupSize, bits); err != nil {
		return err
	}
	if err := checkQuantBuffers(packed, scales, biases, rows, cols, groupSize, bits); err != nil {
		return err
	}
	if len(out) < rows*cols {
		return fmt.Errorf("kernels: dequantize output has %d values, want %d", len(out), rows*cols)
	}
	if rows*cols == 0 {
		return nil
	}
	q := qmat{packed, scales, biases, groupSize, bits}
	parallelFor(rows, 1, 16, func(lo, hi int) {
		dequantize(q, cols, lo, hi, out[lo*cols:hi*cols], 0)
	})
	return nil
}

// dequantizeGo is the portable kernel behind Dequantize: rows [r0, r1) of
// q into out, which starts at row r0.
func dequantizeGo(q qmat, cols, r0, r1 int, out []float32) {
	wpr, gpr, gs := PackedCols(cols, q.bits), cols/q.groupSize, q.groupSize
	codes := make([]uint8, gs)
	for r := r0; r < r1; r++ {
		src := q.w[r*wpr : (r+1)*wpr]
		o := out[(r-r0)*cols : (r-r0+1)*cols]
		for g := 0; g < gpr; g++ {
			dequantGroup(src, q.bits, g*gs, q.scales[r*gpr+g], q.biases[r*gpr+g], codes, o[g*gs:(g+1)*gs])
		}
	}
}
