package mlx

import (
	"os"

	"hark/mlx/kernels"
)

// The CPU backend packs 4-bit matrices with float32 scales into
// kernels.PackedQ4 where the CPU has its kernel. HARK_Q4_LAYOUT=mlx keeps
// MLX's layout, to compare the two or to rule the packed one out.
var keepMLXLayout = os.Getenv("HARK_Q4_LAYOUT") == "mlx"

func (cpuBackend) packQuant(wq, scales, biases *Array, rows, cols, groupSize, bits int) *Array {
	if keepMLXLayout || bits != 4 || scales.dtype != Float32 || !kernels.PackedQ4Supported(cols, groupSize) {
		return nil
	}
	// Packed matrices are model weights: they go straight to resident
	// memory (as mlx.Resident would move them), so loading never holds a
	// heap copy of them beside the MLX arrays they replace.
	n := kernels.PackedQ4Bytes(rows, cols, groupSize)
	buf, mapping := residentBytes(n)
	if buf == nil {
		buf = make([]uint8, n)
	}
	if _, err := kernels.PackQ4(cb(wq).data.([]uint32), f32Of(scales), f32Of(biases), rows, cols, groupSize, buf); err != nil {
		if mapping != nil {
			_ = unmap(mapping)
		}
		panic("mlx.PackQuantized: " + err.Error()) // quantCols checked the shapes
	}
	out := newArray(cpuBackend{}, Uint8, []int{n})
	setData(out, buf)
	out.st.(*cpuBuf).mapped = mapping
	return out
}

func (p *PackedQuant) cpuMatrix() kernels.PackedQ4 {
	return kernels.PackedQ4{Data: cb(p.data).data.([]uint8), Rows: p.rows, Cols: p.cols, GroupSize: p.groupSize}
}

func (cpuBackend) packedMatmul(x *Array, p *PackedQuant, out *Array) {
	m := x.Size() / p.cols
	r := newF32(out.Size())
	if err := kernels.PackedQ4Matmul(f32Of(x), m, p.cpuMatrix(), r); err != nil {
		panic("mlx.PackedQuant.Matmul: " + err.Error())
	}
	setPooledF32(out, r)
}

func (cpuBackend) packedRows(p *PackedQuant, idx *Array, out *Array) {
	q := p.cpuMatrix()
	r := make([]float32, out.Size())
	if idx == nil {
		if err := kernels.PackedQ4Dequantize(q, 0, p.rows, r); err != nil {
			panic("mlx.PackedQuant.Dequantize: " + err.Error())
		}
		setData(out, r)
		return
	}
	for i, row := range indicesOf(idx, p.rows) {
		if err := kernels.PackedQ4Dequantize(q, row, row+1, r[i*p.cols:(i+1)*p.cols]); err != nil {
			panic("mlx.PackedQuant.Take: " + err.Error())
		}
	}
	setData(out, r)
}
