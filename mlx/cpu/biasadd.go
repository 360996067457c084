package cpu

import "hark/mlx"

// AddBiasInPlace adds bias (length n) to every row of y's last axis in y's
// own storage, when y is a float32 buffer of its own that no view shares
// (mlx.Linear's fresh matmul output). Float32 sums round the same whether
// written to y or to a new array, so results match Add bit for bit.
func (cpuBackend) AddBiasInPlace(y, bias *mlx.Array) bool {
	s, ok := y.Storage().(*cpuBuf)
	if !ok || y.DType() != mlx.Float32 || s.refs.Load() != 1 || s.parent != nil || s.mapped != nil {
		return false
	}
	d, ok := s.data.([]float32)
	dims := y.Dims()
	n := dims[len(dims)-1]
	if !ok || n == 0 || len(d)%n != 0 || bias.Size() != n {
		return false
	}
	b := f32Of(bias)
	rows := len(d) / n
	parallelFor(rows, n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := d[r*n : (r+1)*n]
			for j, v := range b[:n] {
				row[j] += v
			}
		}
	})
	return true
}
