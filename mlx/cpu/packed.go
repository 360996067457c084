package cpu

import (
	"os"

	"hark/mlx"
	"hark/mlx/kernels"
)

// The CPU backend packs 4-bit matrices with float32 scales into
// kernels.PackedQ4 where the CPU has its kernel. HARK_Q4_LAYOUT=mlx keeps
// MLX's layout, to compare the two or to rule the packed one out.
var keepMLXLayout = os.Getenv("HARK_Q4_LAYOUT") == "mlx"

// PackQuant implements mlx.QuantPacker.
func (cpuBackend) PackQuant(wq, scales, biases *mlx.Array, rows, cols, groupSize, bits int) *mlx.Array {
	if keepMLXLayout || biases == nil || bits != 4 || scales.DType() != mlx.Float32 || !kernels.PackedQ4Supported(cols, groupSize) {
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
		panic("mlx.QuantMatrix.Pack: " + err.Error()) // NewQuantMatrix checked the shapes
	}
	out := mlx.NewArray(cpuBackend{}, mlx.Uint8, []int{n})
	setData(out, buf)
	out.Storage().(*cpuBuf).mapped = mapping
	return out
}

func packedQ4(packed *mlx.Array, rows, cols, groupSize int) kernels.PackedQ4 {
	return kernels.PackedQ4{Data: cb(packed).data.([]uint8), Rows: rows, Cols: cols, GroupSize: groupSize}
}

// PackedMatmul implements mlx.QuantPacker.
func (cpuBackend) PackedMatmul(x, packed *mlx.Array, rows, cols, groupSize, bits int, out *mlx.Array) {
	m := x.Size() / cols
	r := newF32(out.Size())
	if err := kernels.PackedQ4Matmul(f32Of(x), m, packedQ4(packed, rows, cols, groupSize), r); err != nil {
		panic("mlx.QuantMatrix.MatmulT: " + err.Error())
	}
	setPooledF32(out, r)
}

// PackedRows implements mlx.QuantPacker.
func (cpuBackend) PackedRows(packed *mlx.Array, rows, cols, groupSize, bits int, idx, out *mlx.Array) {
	q := packedQ4(packed, rows, cols, groupSize)
	r := make([]float32, out.Size())
	if idx == nil {
		if err := kernels.PackedQ4Dequantize(q, 0, rows, r); err != nil {
			panic("mlx.QuantMatrix.Dequantize: " + err.Error())
		}
		setData(out, r)
		return
	}
	for i, row := range indicesOf(idx, rows) {
		if err := kernels.PackedQ4Dequantize(q, row, row+1, r[i*cols:(i+1)*cols]); err != nil {
			panic("mlx.QuantMatrix.Take: " + err.Error())
		}
	}
	setData(out, r)
}

// RoundXMinRows implements mlx.XRounder: prompt-sized batches of x meet
// packed 4-bit weights in int8 where the CPU has that kernel.
func (cpuBackend) RoundXMinRows() int { return kernels.PackedInt8MinRows }

// SetRoundX implements mlx.XRounder.
func (cpuBackend) SetRoundX(on bool) (restore func()) { return kernels.SetPackedInt8(on) }
