package cpu

import "hark/mlx"

// bcast walks an output array and k broadcast inputs row by row. Dims of
// size 1 are dropped and adjacent dims that are contiguous in every input
// are merged, so same-shape and scalar cases become a single long row and
// the general case has the longest possible inner loops.
type bcast struct {
	outer   []int   // collapsed outer dims (all but the inner one)
	strides [][]int // per input, per outer dim
	inner   int     // length of the innermost run
	istride []int   // per input: 0 (broadcast) or 1
	rows    int
}

func makeBcast(out []int, ins ...[]int) *bcast {
	nd := len(out)
	k := len(ins)
	// full strides of each input, 0 on broadcast dims
	st := make([][]int, k)
	for j, s := range ins {
		st[j] = make([]int, nd)
		rs := mlx.RowStrides(s)
		off := nd - len(s)
		for i := range s {
			if s[i] != 1 {
				st[j][off+i] = rs[i]
			}
		}
	}
	return makeStrided(out, st...)
}

// makeStrided is makeBcast with explicit element strides per input (one per
// dim of out); transposes, slices and scatters use it.
func makeStrided(out []int, st ...[]int) *bcast {
	nd := len(out)
	k := len(st)
	var dims []int
	cs := make([][]int, k)
	for i := 0; i < nd; i++ {
		if out[i] == 1 {
			continue
		}
		if n := len(dims); n > 0 {
			merge := true
			for j := range st {
				if cs[j][n-1] != st[j][i]*out[i] {
					merge = false
					break
				}
			}
			if merge {
				dims[n-1] *= out[i]
				for j := range st {
					cs[j][n-1] = st[j][i]
				}
				continue
			}
		}
		dims = append(dims, out[i])
		for j := range st {
			cs[j] = append(cs[j], st[j][i])
		}
	}
	p := &bcast{inner: 1, istride: make([]int, k), rows: 1}
	if n := len(dims); n > 0 {
		p.inner = dims[n-1]
		for j := range cs {
			p.istride[j] = cs[j][n-1]
		}
		p.outer = dims[:n-1]
		p.strides = make([][]int, k)
		for j := range cs {
			p.strides[j] = cs[j][:n-1]
		}
		p.rows = mlx.ShapeSize(p.outer)
	}
	return p
}

// run calls fn(o, offs, n) for runs of n output elements starting at flat
// output index o, with offs[j] the matching element offset in input j (whose
// step along the run is istride[j]). Work is split across goroutines; costly
// is the relative per-element cost.
func (p *bcast) run(costly int, fn func(o int, offs []int, n int)) {
	k := len(p.istride)
	if p.rows == 0 || p.inner == 0 {
		return
	}
	if p.rows == 1 {
		parallelFor(p.inner, costly, func(lo, hi int) {
			offs := make([]int, k)
			for j := range offs {
				offs[j] = lo * p.istride[j]
			}
			fn(lo, offs, hi-lo)
		})
		return
	}
	parallelFor(p.rows, p.inner*costly, func(lo, hi int) {
		nd := len(p.outer)
		idx := make([]int, nd)
		offs := make([]int, k)
		// decompose lo into the multi-index and starting offsets
		r := lo
		for d := nd - 1; d >= 0; d-- {
			idx[d] = r % p.outer[d]
			r /= p.outer[d]
			for j := range offs {
				offs[j] += idx[d] * p.strides[j][d]
			}
		}
		for row := lo; row < hi; row++ {
			fn(row*p.inner, offs, p.inner)
			for d := nd - 1; d >= 0; d-- {
				idx[d]++
				for j := range offs {
					offs[j] += p.strides[j][d]
				}
				if idx[d] < p.outer[d] {
					break
				}
				for j := range offs {
					offs[j] -= p.strides[j][d] * p.outer[d]
				}
				idx[d] = 0
			}
		}
	})
}
