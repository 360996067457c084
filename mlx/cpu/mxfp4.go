package cpu

import (
	"hark/mlx"
	"hark/mlx/kernels"
)

// MXFP4 kernels (mlx.MXFP4er): the weights stay packed, four bits a
// value, and each row (or, for x @ W, each input row of W) is decoded into
// a small float32 buffer just before it is used. Every decoded value is
// exact (an E2M1 value times a power of two), so the products equal a
// float32 matmul with the dequantized matrix up to summation order.

// mxRow decodes one packed row (cols/8 words, cols/32 scales) into dst.
func mxRow(dst []float32, words []uint32, scales []uint8) {
	var lut [16]float32
	for b, s := range scales {
		mul := mlx.E8M0(s)
		for i, v := range mlx.FP4E2M1 {
			lut[i] = v * mul
		}
		o := dst[32*b : 32*b+32]
		for j, w := range words[4*b : 4*b+4] {
			oj := o[8*j : 8*j+8]
			oj[0], oj[1], oj[2], oj[3] = lut[w&15], lut[w>>4&15], lut[w>>8&15], lut[w>>12&15]
			oj[4], oj[5], oj[6], oj[7] = lut[w>>16&15], lut[w>>20&15], lut[w>>24&15], lut[w>>28]
		}
	}
}

// mxMatmul sets out [m, n] = x [m, k] @ op(W): W is packed [n, k] when
// transpose (x @ Wᵀ, the Linear layout), else [k, n].
func mxMatmul(x []float32, m, k, n int, w []uint32, scales []uint8, transpose bool, out []float32) {
	if !transpose {
		clear(out[:m*n])
		row := make([]float32, n)
		for kk := 0; kk < k; kk++ {
			mxRow(row, w[kk*n/8:(kk+1)*n/8], scales[kk*n/32:(kk+1)*n/32])
			for i := 0; i < m; i++ {
				xi, o := x[i*k+kk], out[i*n:(i+1)*n]
				for j, v := range row {
					o[j] += xi * v
				}
			}
		}
		return
	}
	if m <= mxFusedRows {
		parallelFor(n, m*k, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				wj, sj := w[j*k/8:(j+1)*k/8], scales[j*k/32:(j+1)*k/32]
				for i := 0; i < m; i++ {
					out[i*n+j] = mxDot(x[i*k:(i+1)*k], wj, sj)
				}
			}
		})
		return
	}
	mxMatmulRows(x, m, k, n, w, scales, out)
}

// mxFusedRows: up to this many rows (decode), each product reads the
// packed row directly (mxDot); more rows amortise decoding each weight
// row once into a buffer (mxMatmulRows).
const mxFusedRows = 2

// mxMatmulRows is mxMatmul with transpose for many rows of x: each row of
// W is decoded once and multiplied by every row of x.
func mxMatmulRows(x []float32, m, k, n int, w []uint32, scales []uint8, out []float32) {
	parallelFor(n, m*k, func(lo, hi int) {
		row := make([]float32, k)
		for j := lo; j < hi; j++ {
			mxRow(row, w[j*k/8:(j+1)*k/8], scales[j*k/32:(j+1)*k/32])
			for i := 0; i < m; i++ {
				out[i*n+j] = kernels.Dot(x[i*k:(i+1)*k], row)
			}
		}
	})
}

// e8m0 is mlx.E8M0 for every byte.
var e8m0 = func() (t [256]float32) {
	for i := range t {
		t[i] = mlx.E8M0(uint8(i))
	}
	return t
}()

// mxDot is x · (one packed MXFP4 row): per block, the codes' E2M1 values
// times x summed, then scaled (as MLX's kernel does).
func mxDot(x []float32, words []uint32, scales []uint8) float32 {
	lut := &mlx.FP4E2M1
	var sum float32
	for b, s := range scales {
		xb := x[32*b : 32*b+32 : 32*b+32]
		wb := words[4*b : 4*b+4 : 4*b+4]
		var g0, g1 float32
		for q, wd := range wb {
			xq := xb[8*q : 8*q+8 : 8*q+8]
			g0 += xq[0]*lut[wd&15] + xq[1]*lut[wd>>4&15] + xq[2]*lut[wd>>8&15] + xq[3]*lut[wd>>12&15]
			g1 += xq[4]*lut[wd>>16&15] + xq[5]*lut[wd>>20&15] + xq[6]*lut[wd>>24&15] + xq[7]*lut[wd>>28]
		}
		sum += (g0 + g1) * e8m0[s]
	}
	return sum
}

// DequantizeMXFP4 implements mlx.MXFP4er.
func (cpuBackend) DequantizeMXFP4(wq, scales, out *mlx.Array) {
	r := make([]float32, out.Size())
	mlx.DecodeMXFP4(r, cb(wq).data.([]uint32), cb(scales).data.([]uint8))
	setData(out, r)
}

// QuantizedMatmulMXFP4 implements mlx.MXFP4er.
func (cpuBackend) QuantizedMatmulMXFP4(x, wq, scales *mlx.Array, transpose bool, out *mlx.Array) {
	k := x.Dims()[len(x.Dims())-1]
	m := x.Size() / max(k, 1)
	n := out.Dims()[len(out.Dims())-1]
	r := newF32(out.Size())
	if m > 0 {
		mxMatmul(f32Of(x), m, k, n, cb(wq).data.([]uint32), cb(scales).data.([]uint8), transpose, r)
	}
	setPooledF32(out, r)
}

// GatherQMMMXFP4 implements mlx.MXFP4er: one matmul per run of equal
// expert index, reading only that expert's packed rows.
func (cpuBackend) GatherQMMMXFP4(x, wq, scales, lhs, rhs *mlx.Array, transpose bool, out *mlx.Array) {
	xd, wd := x.Dims(), wq.Dims()
	nA, m, k := xd[0], xd[1], xd[2]
	nE, per, sPer := wd[0], wd[1]*wd[2], scales.Dims()[1]*scales.Dims()[2]
	n := out.Dims()[2]
	li, ri := indicesOf(lhs, nA), indicesOf(rhs, nE)
	xf := f32Of(x)
	wAll, sAll := cb(wq).data.([]uint32), cb(scales).data.([]uint8)
	r := newF32(out.Size())
	for _, run := range expertRuns(ri) {
		s, e := run[0], run[1]
		ex := ri[s]
		mxMatmul(gatherRows(xf, li, run, m*k), (e-s)*m, k, n, wAll[ex*per:(ex+1)*per], sAll[ex*sPer:(ex+1)*sPer], transpose, r[s*m*n:e*m*n])
	}
	setPooledF32(out, r)
}
