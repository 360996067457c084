package cpu

import (
	"hark/mlx"
	"hark/mlx/kernels"
)

// PackQuantParts implements mlx.QuantPartsPacker. A packed matrix is its
// tiles of 4 rows one after another, so parts whose rows are whole tiles
// (all but the last) pack side by side into one buffer exactly as their
// concatenation would, with no joined copy in between.
func (cpuBackend) PackQuantParts(wq, scales, biases []*mlx.Array, rows []int, cols, groupSize, bits int) *mlx.Array {
	if keepMLXLayout || bits != 4 || !kernels.PackedQ4Supported(cols, groupSize) {
		return nil
	}
	total := 0
	for i, r := range rows {
		if biases[i] == nil || scales[i].DType() != mlx.Float32 || i < len(rows)-1 && r%kernels.PackedQ4TileRows != 0 {
			return nil
		}
		total += r
	}
	n := kernels.PackedQ4Bytes(total, cols, groupSize)
	buf, mapping := residentBytes(n)
	if buf == nil {
		buf = make([]uint8, n)
	}
	at := 0
	for i, r := range rows {
		size := kernels.PackedQ4Bytes(r, cols, groupSize)
		if _, err := kernels.PackQ4(cb(wq[i]).data.([]uint32), f32Of(scales[i]), f32Of(biases[i]), r, cols, groupSize, buf[at:at+size]); err != nil {
			if mapping != nil {
				_ = unmap(mapping)
			}
			panic("mlx.PackedQuantMatrices: " + err.Error()) // NewQuantMatrix checked the shapes
		}
		at += size
	}
	out := mlx.NewArray(cpuBackend{}, mlx.Uint8, []int{n})
	setData(out, buf)
	out.Storage().(*cpuBuf).mapped = mapping
	return out
}
