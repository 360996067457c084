package cpu

import (
	"math"
	"slices"

	"hark/mlx"
)

// sortKeys returns x's data with axis moved last as float32 rows when that
// is exact (float dtypes), else as float64 rows, plus the row length.
func sortRows(x *mlx.Array, axis int) (f32 []float32, f64 []float64, d any, r int) {
	d, r = trailing(x, []int{axis})
	if x.DType().IsFloat() {
		if s, ok := d.([]float32); ok {
			return s, nil, d, r
		}
		return asF32(x.DType(), d), nil, d, r
	}
	return nil, asF64(x.DType(), d), d, r
}

func asF32(dt mlx.DType, d any) []float32 {
	s := d.([]uint16)
	r := make([]float32, len(s))
	if dt == mlx.Float16 {
		mlx.F16sToF32(r, s)
	} else {
		mlx.BF16sToF32(r, s)
	}
	return r
}

func (cpuBackend) Cumsum(x *mlx.Array, axis int, reverse, inclusive bool, out *mlx.Array) {
	f32, f64, _, r := sortRows(x, axis)
	if f32 != nil && out.DType() == mlx.Float32 {
		res := make([]float32, len(f32))
		cumsumRows(f32, res, r, reverse, inclusive)
		setData(out, untrail(out.DType(), out.Dims(), axis, res))
		return
	}
	if f32 != nil {
		f64 = make([]float64, len(f32))
		for i, v := range f32 {
			f64[i] = float64(v)
		}
	}
	// half-precision running sums accumulate in float64 and round once;
	// integer sums are exact in float64 up to 2^53 and then wrap like C
	res := make([]float64, len(f64))
	cumsumRows(f64, res, r, reverse, inclusive)
	if !out.DType().IsFloat() {
		for i, v := range res {
			res[i] = float64(int64(v))
		}
	}
	setData(out, untrail(out.DType(), out.Dims(), axis, fromF64(out.DType(), res)))
}

func cumsumRows[T float32 | float64](f, res []T, r int, reverse, inclusive bool) {
	rows := len(f) / max(r, 1)
	for i := 0; i < rows; i++ {
		row, o := f[i*r:(i+1)*r], res[i*r:(i+1)*r]
		var s T
		for j := 0; j < r; j++ {
			k := j
			if reverse {
				k = r - 1 - j
			}
			if inclusive {
				s += row[k]
				o[k] = s
			} else {
				o[k] = s
				s += row[k]
			}
		}
	}
}

// lessNaN orders NaN after everything, as MLX's sort does.
func lessNaN[T float32 | float64](a, b T) bool {
	if a != a {
		return false
	}
	return b != b || a < b
}

func (cpuBackend) Sort(x *mlx.Array, axis int, arg bool, out *mlx.Array) {
	f32, f64, d, r := sortRows(x, axis)
	n := max(len(f32), len(f64))
	rows := n / max(r, 1)
	idx := make([]uint32, n)
	parallelFor(rows, r*8, func(lo, hi int) {
		var scratch radixScratch
		for i := lo; i < hi; i++ {
			ix := idx[i*r : (i+1)*r]
			if f32 != nil {
				argsortF32(f32[i*r:(i+1)*r], ix, &scratch)
			} else {
				argsortCmp(f64[i*r:(i+1)*r], ix)
			}
		}
	})
	if arg {
		setData(out, untrail(mlx.Uint32, out.Dims(), axis, idx))
		return
	}
	setData(out, untrail(out.DType(), out.Dims(), axis, pickRows(x.DType(), d, idx, r, r)))
}

// argsortCmp is a stable comparison argsort (ties keep index order).
func argsortCmp[T float32 | float64](row []T, ix []uint32) {
	for j := range ix {
		ix[j] = uint32(j)
	}
	slices.SortStableFunc(ix, func(a, b uint32) int {
		switch {
		case lessNaN(row[a], row[b]):
			return -1
		case lessNaN(row[b], row[a]):
			return 1
		}
		return 0
	})
}

type radixScratch struct{ keys, keys2, ix2 []uint32 }

// argsortF32 sorts long float32 rows with a stable LSD radix sort on
// order-preserving integer keys (three 11-bit passes), which is several
// times faster than comparison sorting a vocabulary-sized row. Short rows
// use the comparison sort. -0 equals +0 and NaN sorts last, as in MLX.
func argsortF32(row []float32, ix []uint32, sc *radixScratch) {
	n := len(row)
	if n < 512 {
		argsortCmp(row, ix)
		return
	}
	if cap(sc.keys) < n {
		sc.keys, sc.keys2, sc.ix2 = make([]uint32, n), make([]uint32, n), make([]uint32, n)
	}
	keys, keys2, ix2 := sc.keys[:n], sc.keys2[:n], sc.ix2[:n]
	for i, v := range row {
		b := math.Float32bits(v)
		switch {
		case v != v:
			b = 0xffffffff // every NaN after +Inf
		case b == 0x80000000:
			b = 0x80000000 // -0 as +0
		case b&0x80000000 != 0:
			b = ^b
		default:
			b |= 0x80000000
		}
		keys[i] = b
		ix[i] = uint32(i)
	}
	src, dst := ix, ix2
	for shift := uint(0); shift < 32; shift += 11 {
		var cnt [2049]int
		for _, k := range keys {
			cnt[(k>>shift)&2047+1]++
		}
		for i := 1; i < len(cnt); i++ {
			cnt[i] += cnt[i-1]
		}
		for i, k := range keys {
			b := (k >> shift) & 2047
			p := cnt[b]
			cnt[b]++
			keys2[p] = k
			dst[p] = src[i]
		}
		keys, keys2 = keys2, keys
		src, dst = dst, src
	}
	if &src[0] != &ix[0] {
		copy(ix, src)
	}
}

// pickRows builds rows of k elements taken from rows of r elements of d
// (storage) at the per-row positions idx.
func pickRows(dt mlx.DType, d any, idx []uint32, r, k int) any {
	res := allocData(dt, len(idx))
	rows := len(idx) / max(k, 1)
	switch s := d.(type) {
	case []float32:
		pickRowsT(res.([]float32), s, idx, rows, r, k)
	case []uint16:
		pickRowsT(res.([]uint16), s, idx, rows, r, k)
	case []int32:
		pickRowsT(res.([]int32), s, idx, rows, r, k)
	case []uint32:
		pickRowsT(res.([]uint32), s, idx, rows, r, k)
	case []uint8:
		pickRowsT(res.([]uint8), s, idx, rows, r, k)
	}
	return res
}

func pickRowsT[T any](dst, src []T, idx []uint32, rows, r, k int) {
	for i := 0; i < rows; i++ {
		for j := 0; j < k; j++ {
			dst[i*k+j] = src[i*r+int(idx[i*k+j])]
		}
	}
}

func (cpuBackend) TopK(x *mlx.Array, k, axis int, arg bool, out *mlx.Array) {
	f32, f64, d, r := sortRows(x, axis)
	n := max(len(f32), len(f64))
	rows := n / max(r, 1)
	idx := make([]uint32, rows*k)
	parallelFor(rows, r*4, func(lo, hi int) {
		h := make([]int, 0, k)
		for i := lo; i < hi; i++ {
			if f32 != nil {
				topKRow(f32[i*r:(i+1)*r], k, h[:0], idx[i*k:(i+1)*k])
			} else {
				topKRow(f64[i*r:(i+1)*r], k, h[:0], idx[i*k:(i+1)*k])
			}
		}
	})
	if arg {
		setData(out, untrail(mlx.Uint32, out.Dims(), axis, idx))
		return
	}
	setData(out, untrail(out.DType(), out.Dims(), axis, pickRows(x.DType(), d, idx, r, k)))
}

// topKRow keeps a min-heap of the best k indices seen (O(n log k)), then
// sorts them best first. "Better" means larger value, NaN largest, lower
// index on ties.
func topKRow[T float32 | float64](row []T, k int, h []int, dst []uint32) {
	better := func(a, b int) bool {
		va, vb := row[a], row[b]
		if va == vb || (va != va && vb != vb) {
			return a < b
		}
		return lessNaN(vb, va)
	}
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			w := l
			if r := l + 1; r < len(h) && better(h[l], h[r]) {
				w = r
			}
			if !better(h[i], h[w]) {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for j := range row {
		if len(h) < k {
			h = append(h, j)
			for c := len(h) - 1; c > 0; {
				p := (c - 1) / 2
				if !better(h[p], h[c]) {
					break
				}
				h[p], h[c] = h[c], h[p]
				c = p
			}
			continue
		}
		// cheap rejection before the full comparison: most elements of a
		// long row are worse than the current k-th best
		if better(j, h[0]) {
			h[0] = j
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b int) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	for i, v := range h {
		dst[i] = uint32(v)
	}
}
