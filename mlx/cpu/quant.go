package cpu

import (
	"fmt"

	"hark/mlx"
	"hark/mlx/kernels"
)

func (cpuBackend) Quantize(w *mlx.Array, groupSize, bits int, packed, scales, biases *mlx.Array) error {
	cols := w.Dims()[len(w.Dims())-1]
	rows := w.Size() / max(cols, 1)
	p, s, b, err := kernels.Quantize(f32Of(w), rows, cols, groupSize, bits)
	if err != nil {
		return fmt.Errorf("mlx.Quantize: %w", err)
	}
	setData(packed, p)
	setF32(scales, s)
	setF32(biases, b)
	return nil
}

func (cpuBackend) Dequantize(packed, scales, biases *mlx.Array, groupSize, bits int, out *mlx.Array) {
	cols := out.Dims()[len(out.Dims())-1]
	rows := out.Size() / max(cols, 1)
	r := make([]float32, out.Size())
	sf, bf := f32Of(scales), f32Of(biases)
	dt := scales.DType()
	if dt == mlx.Float32 {
		if err := kernels.Dequantize(cb(packed).data.([]uint32), sf, bf, rows, cols, groupSize, bits, r); err != nil {
			panic("mlx.Dequantize: " + err.Error())
		}
		setF32(out, r)
		return
	}
	// Half-precision scales: MLX computes s*q and then +b in the half type,
	// rounding after each step. Unpack the codes exactly (scale 1, bias 0)
	// and redo the arithmetic with both roundings.
	ones := make([]float32, len(sf))
	fillT(ones, 1)
	if err := kernels.Dequantize(cb(packed).data.([]uint32), ones, make([]float32, len(bf)), rows, cols, groupSize, bits, r); err != nil {
		panic("mlx.Dequantize: " + err.Error())
	}
	groups := cols / groupSize
	for i, q := range r {
		g := (i/cols)*groups + (i%cols)/groupSize
		r[i] = roundTo(dt, roundTo(dt, sf[g]*q)+bf[g])
	}
	setF32(out, r)
}

func (cpuBackend) QuantizedMatmul(x, w, scales, biases *mlx.Array, transpose bool, groupSize, bits int, out *mlx.Array) {
	k := x.Dims()[len(x.Dims())-1]
	m := x.Size() / max(k, 1)
	n := out.Dims()[len(out.Dims())-1]
	r := newF32(out.Size())
	if m > 0 {
		err := kernels.QMatmul(f32Of(x), m, k, n, cb(w).data.([]uint32), f32Of(scales), f32Of(biases), groupSize, bits, transpose, r)
		if err != nil {
			panic("mlx.QuantizedMatmul: " + err.Error())
		}
	}
	setPooledF32(out, r)
}
