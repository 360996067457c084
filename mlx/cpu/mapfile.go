package cpu

import (
	"hark/mlx"
)

// MapFile implements mlx.FileMapper: the storage is a read-only mapping of
// the file range itself. Nothing in the backend writes into an input
// array's storage (SliceAssign's destination is a cache, never a weight),
// and MakeResident leaves mapped storage alone, so the mapping is only
// ever read; a stray write would fault rather than change the file.
func (cpuBackend) MapFile(out *mlx.Array, path string, offset int64) bool {
	n := out.Size()
	es := out.DType().Size()
	if !littleEndian || n == 0 || offset%int64(es) != 0 {
		return false // the data would be misaligned for its element type
	}
	switch out.DType() {
	case mlx.Float32, mlx.Float16, mlx.BFloat16, mlx.Int32, mlx.Uint32, mlx.Uint8:
	default:
		return false
	}
	mem, mapping := mapFileRange(path, offset, n*es)
	if mem == nil {
		return false
	}
	setMapped(out, mem, n, mapping)
	return true
}
