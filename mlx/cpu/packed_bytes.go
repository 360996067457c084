package cpu

import (
	"hark/mlx"
	"hark/mlx/kernels"
)

// scaleFormat is the kernels' name for a checkpoint's scale dtype.
func scaleFormat(dt mlx.DType) (kernels.ScaleFormat, bool) {
	switch dt {
	case mlx.Float32:
		return kernels.ScaleF32, true
	case mlx.BFloat16:
		return kernels.ScaleBF16, true
	case mlx.Float16:
		return kernels.ScaleF16, true
	}
	return 0, false
}

// PacksQuantBytes implements mlx.QuantBytesPacker: the formats PackQuant
// packs, with scales in any float dtype.
func (cpuBackend) PacksQuantBytes(cols, groupSize, bits int, scaleType mlx.DType) bool {
	_, ok := scaleFormat(scaleType)
	return ok && !keepMLXLayout && littleEndian && bits == 4 && kernels.PackedQ4Supported(cols, groupSize)
}

// PackQuantBytes implements mlx.QuantBytesPacker: the parts go straight
// from the checkpoint's bytes into one packed buffer in resident memory,
// side by side as their concatenation would (see PackQuantParts), so a
// matrix is neither copied into MLX's arrays nor joined before it packs.
func (b cpuBackend) PackQuantBytes(parts []mlx.QuantBytes) *mlx.Array {
	if len(parts) == 0 {
		return nil
	}
	cols, groupSize := parts[0].Cols, parts[0].GroupSize
	total := 0
	for i, p := range parts {
		if !b.PacksQuantBytes(p.Cols, p.GroupSize, p.Bits, p.ScaleType) || p.Cols != cols || p.GroupSize != groupSize ||
			i < len(parts)-1 && p.Rows%kernels.PackedQ4TileRows != 0 {
			return nil
		}
		total += p.Rows
	}
	n := kernels.PackedQ4Bytes(total, cols, groupSize)
	buf, mapping := residentBytes(n)
	if buf == nil {
		buf = make([]uint8, n)
	}
	at := 0
	for _, p := range parts {
		f, _ := scaleFormat(p.ScaleType)
		size := kernels.PackedQ4Bytes(p.Rows, cols, groupSize)
		src := kernels.Q4Bytes{Weight: p.Weight, Scales: p.Scales, Biases: p.Biases, Format: f, Rows: p.Rows}
		if _, err := kernels.PackQ4Bytes(src, cols, groupSize, buf[at:at+size]); err != nil {
			if mapping != nil {
				_ = unmap(mapping)
			}
			panic("mlx.QuantMatrix.Pack: " + err.Error()) // NewQuantMatrixBytes checked the sizes
		}
		at += size
	}
	out := mlx.NewArray(cpuBackend{}, mlx.Uint8, []int{n})
	setData(out, buf)
	out.Storage().(*cpuBuf).mapped = mapping
	return out
}
