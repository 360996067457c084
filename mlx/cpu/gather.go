package cpu

import (
	"hark/mlx"
	"hark/mlx/kernels"
)

// Gather-matmuls (mlx.GatherMatmuler): the experts of a mixture-of-experts
// layer. Output rows come in runs of equal expert index (all of them when
// the caller sorted tokens by expert); each run is one matmul that reads
// its expert's weights in place, so the weights of experts no token chose
// are never touched, and a large run streams its expert once for all of
// its rows.

func (cpuBackend) GatherMM(a, b, lhs, rhs *mlx.Array, transB bool, out *mlx.Array) {
	ad, bd := a.Dims(), b.Dims()
	nA, m, k := ad[0], ad[1], ad[2]
	n := out.Dims()[2]
	li, ri := indicesOf(lhs, nA), indicesOf(rhs, bd[0])
	af, bw := f32Of(a), expertFloats(b) // 16-bit experts widened one at a time
	ldb := n
	if transB {
		ldb = k
	}
	r := make([]float32, out.Size())
	runs := expertRuns(ri)
	mat := func(run [2]int, x []float32) {
		s, e := run[0], run[1]
		rows := (e - s) * m
		w := bw(ri[s]*k*n, (ri[s]+1)*k*n)
		y := r[s*m*n : e*m*n]
		if transB && smallMatmulT(rows, n, k) {
			matmulTSmall(x, rows, k, w, n, y)
		} else {
			kernels.Sgemm(false, transB, rows, n, k, 1, x, k, w, ldb, 0, y, n)
		}
	}
	if smallRuns(runs, m, n*k) && transB {
		// Decode: a few one-row products, each too small to split; run
		// the experts side by side instead.
		parallelFor(len(runs), m*n*k, func(lo, hi int) {
			for _, run := range runs[lo:hi] {
				mat(run, gatherRows(af, li, run, m*k))
			}
		})
	} else {
		for _, run := range runs {
			mat(run, gatherRows(af, li, run, m*k))
		}
	}
	setF32(out, r)
}

func (cpuBackend) GatherQMM(x, wq, scales, biases, lhs, rhs *mlx.Array, transpose bool, groupSize, bits int, out *mlx.Array) {
	xd, wd := x.Dims(), wq.Dims()
	nA, m, k := xd[0], xd[1], xd[2]
	nE, wRows, wCols := wd[0], wd[1], wd[2]
	gCols := scales.Dims()[2]
	n := out.Dims()[2]
	li, ri := indicesOf(lhs, nA), indicesOf(rhs, nE)
	xf := f32Of(x)
	wAll := cb(wq).data.([]uint32)
	sAll, bAll := expertFloats(scales), expertFloats(biases)
	r := newF32(out.Size())
	for _, run := range expertRuns(ri) {
		s, e := run[0], run[1]
		ex := ri[s]
		rows := (e - s) * m
		err := kernels.QMatmul(gatherRows(xf, li, run, m*k), rows, k, n,
			wAll[ex*wRows*wCols:(ex+1)*wRows*wCols],
			sAll(ex*wRows*gCols, (ex+1)*wRows*gCols), bAll(ex*wRows*gCols, (ex+1)*wRows*gCols),
			groupSize, bits, transpose, r[s*m*n:e*m*n])
		if err != nil {
			panic("mlx.GatherQMM: " + err.Error())
		}
	}
	setPooledF32(out, r)
}

// expertRuns cuts the index list into maximal runs [start, end) of equal
// entries.
func expertRuns(ri []int) [][2]int {
	var runs [][2]int
	for s := 0; s < len(ri); {
		e := s + 1
		for e < len(ri) && ri[e] == ri[s] {
			e++
		}
		runs = append(runs, [2]int{s, e})
		s = e
	}
	return runs
}

// smallRuns reports whether every run is a product small enough to do
// inline (matmulTSmall).
func smallRuns(runs [][2]int, m, nk int) bool {
	for _, r := range runs {
		if (r[1]-r[0])*m*nk > smallMatmulWork {
			return false
		}
	}
	return true
}

// gatherRows returns the left operands of a run, the matrices li[s:e] of
// size each, contiguous: in place when they already are (consecutive
// indices: a sorted batch whose rows were gathered by the caller), else
// copied.
func gatherRows(af []float32, li []int, run [2]int, size int) []float32 {
	s, e := run[0], run[1]
	consecutive := true
	for i := s + 1; i < e && consecutive; i++ {
		consecutive = li[i] == li[s]+i-s
	}
	if consecutive {
		return af[li[s]*size : (li[s]+e-s)*size]
	}
	x := make([]float32, (e-s)*size)
	for i := s; i < e; i++ {
		copy(x[(i-s)*size:(i-s+1)*size], af[li[i]*size:(li[i]+1)*size])
	}
	return x
}

// expertFloats returns a reader of float32 windows of a scales or biases
// array: the storage itself for float32 (the loader's dtype), and for
// half precision a conversion of just the window asked for, so an MoE
// layer never widens the tables of experts it does not use.
func expertFloats(a *mlx.Array) func(lo, hi int) []float32 {
	if a.DType() == mlx.Float32 {
		d := f32Of(a)
		return func(lo, hi int) []float32 { return d[lo:hi] }
	}
	raw := cb(a).data.([]uint16)
	half := a.DType() == mlx.Float16
	return func(lo, hi int) []float32 {
		r := make([]float32, hi-lo)
		if half {
			mlx.F16sToF32(r, raw[lo:hi])
		} else {
			mlx.BF16sToF32(r, raw[lo:hi])
		}
		return r
	}
}
