package cpu

import (
	"fmt"

	"hark/mlx"
	"hark/mlx/kernels"
)

func (cpuBackend) Matmul(a, b *mlx.Array, transB bool, out *mlx.Array) {
	if matmulHalf(a, b, transB, out) {
		return
	}
	af, bf := f32Of(a), f32Of(b)
	as, bs := a.Dims(), b.Dims()
	m, k := as[len(as)-2], as[len(as)-1]
	n := out.Dims()[len(out.Dims())-1]
	ldb := n
	if transB {
		ldb = k
	}
	// Recycled (bufpool.go): an encoder's projections are MBs each, and
	// fresh ones were garbage the collector let pile up to hundreds of MB.
	r := newF32(out.Size())
	abatch, bbatch := as[:len(as)-2], bs[:len(bs)-2]
	if mlx.ShapeSize(bbatch) == 1 {
		// The weight has no batch: fold every batch of a into the rows of
		// one big GEMM (the Linear-layer case).
		rows := mlx.ShapeSize(out.Dims()) / max(n, 1)
		if mlx.ShapeSize(abatch)*m == rows {
			if transB && smallMatmulT(rows, n, k) {
				matmulTSmall(af, rows, k, bf, n, r)
			} else if rows > 0 && n > 0 {
				kernels.Sgemm(false, transB, rows, n, k, 1, af, k, bf, ldb, 0, r, n)
			}
			setPooledF32(out, r)
			return
		}
	}
	batch := out.Dims()[:len(out.Dims())-2]
	nb := mlx.ShapeSize(batch)
	p := makeBcast(batch, abatch, bbatch)
	offA, offB := make([]int, nb), make([]int, nb)
	p.run(1, func(o int, offs []int, cnt int) {
		for i := 0; i < cnt; i++ {
			offA[o+i] = offs[0] + i*p.istride[0]
			offB[o+i] = offs[1] + i*p.istride[1]
		}
	})
	if nb == 1 && len(batch) == 0 {
		offA[0], offB[0] = 0, 0
	}
	for i := 0; i < nb; i++ {
		if m == 0 || n == 0 {
			break
		}
		kernels.Sgemm(false, transB, m, n, k, 1, af[offA[i]*m*k:], k, bf[offB[i]*k*n:], ldb, 0, r[i*m*n:], n)
	}
	setPooledF32(out, r)
}

// matmulHalf computes out = a @ op(b) for a float32 a and a float16 or
// bfloat16 b without a batch (a weight: Linear, the tied output head),
// reading b's 16-bit storage in the kernels instead of widening all of it
// first (issue 13: weights keep their file dtype). false when the operands
// are not of that kind; Matmul then takes the float32 path.
func matmulHalf(a, b *mlx.Array, transB bool, out *mlx.Array) bool {
	format := kernels.BF16
	switch b.DType() {
	case mlx.BFloat16:
	case mlx.Float16:
		format = kernels.F16
	default:
		return false
	}
	as, bs := a.Dims(), b.Dims()
	if a.DType() != mlx.Float32 || out.DType() != mlx.Float32 || mlx.ShapeSize(bs[:len(bs)-2]) != 1 {
		return false
	}
	k, n := as[len(as)-1], out.Dims()[len(out.Dims())-1]
	rows := mlx.ShapeSize(out.Dims()) / max(n, 1)
	if mlx.ShapeSize(as[:len(as)-1]) != rows {
		return false // a broadcasts against b's batch
	}
	af, bits := f32Of(a), cb(b).data.([]uint16)
	r := newF32(out.Size())
	if err := kernels.HMatmul(af, rows, k, n, bits, format, transB, r); err != nil {
		panic(fmt.Sprintf("mlx: cpu Matmul: %v", err)) // shapes were checked by mlx.Matmul
	}
	setPooledF32(out, r)
	return true
}

// smallMatmulWork is the largest rows*n*k that matmulTSmall handles: below
// it a BLAS call's fixed cost (the cgo transition, dispatch, packing B)
// outweighs the arithmetic.
const smallMatmulWork = 1 << 15

// smallMatmulT says whether a @ bᵀ of rows × k by n × k goes to
// matmulTSmall. Batches of up to kernels.SgemmRowsMaxM rows (decode
// steps) never do: Sgemm's row-exact kernel sums each of their rows as it
// sums that row alone, where the choice between the two would depend on
// the batch size.
func smallMatmulT(rows, n, k int) bool {
	return rows > kernels.SgemmRowsMaxM && rows*n*k <= smallMatmulWork
}

// matmulTSmall is r = a @ bᵀ for a [m, k] and b [n, k], inline on the
// calling goroutine.
func matmulTSmall(a []float32, m, k int, b []float32, n int, r []float32) {
	for i := 0; i < m; i++ {
		x := a[i*k : (i+1)*k]
		for j := 0; j < n; j++ {
			r[i*n+j] = kernels.Dot(x, b[j*k:(j+1)*k])
		}
	}
}
