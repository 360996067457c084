package mlx

import (
	"fmt"
)

// Gather-matmul: a batch of matrix products whose operands are picked by
// index arrays, the op mixture-of-experts layers evaluate their experts
// with (mlx.core.gather_mm / gather_qmm). Each token's hidden state is
// multiplied by the weights of the experts its router chose, and only
// those experts' weights are read.

// GatherMatmuler is implemented by backends with fused gather-matmuls.
// GatherMM, GatherMMT and GatherQMM use it when the inputs' backend has it
// and otherwise compose the result from Take, SliceAxis and the matmuls,
// one matmul per run of equal right-hand indices (so sorting tokens by
// expert pays on every backend).
//
// The package has already normalised the arguments: a (x) is [A, M, K];
// b is [E, K, N] ([E, N, K] when transB); the quantized w is
// [E, N, K*bits/32] with scales and biases [E, N, K/groupSize] when
// transpose, [E, K, N*bits/32] and [E, K, N/groupSize] otherwise; lhs and
// rhs are int32 [n] with entries in [0, A) and [0, E); out is [n, M, N]
// with out[i] = a[lhs[i]] @ op(b[rhs[i]]). b may be float16 or bfloat16
// with a and out float32 (16-bit experts, read as stored).
type GatherMatmuler interface {
	GatherMM(a, b, lhs, rhs *Array, transB bool, out *Array)
	GatherQMM(x, wq, scales, biases, lhs, rhs *Array, transpose bool, groupSize, bits int, out *Array)
}

// GatherMM is mlx.core.gather_mm: a [..., M, K] and b [..., K, N], whose
// leading axes (flattened) are batches of matrices. lhs indexes a's batch
// and rhs b's; nil means every matrix in order (an arange of the batch's
// shape). The two index arrays broadcast together to the output's batch
// shape, and the result is idx.shape + [M, N] with
// out[i] = a[lhs[i]] @ b[rhs[i]], computed in float32 in the operands'
// promoted dtype. sorted says rhs is sorted (tokens grouped by expert), as
// MLX's sorted_indices; it is a hint that never changes the result.
func GatherMM(a, b, lhs, rhs *Array, sorted bool) *Array {
	return gatherMM("GatherMM", a, b, lhs, rhs, false)
}

// GatherMMT is GatherMM with b's matrices transposed, without copying
// them: b is [..., N, K], the layout of stacked Linear weights (an MoE
// layer's experts as checkpoints store them). MLX spells it
// gather_mm(a, swapaxes(b, -1, -2), ...).
func GatherMMT(a, b, lhs, rhs *Array, sorted bool) *Array {
	return gatherMM("GatherMMT", a, b, lhs, rhs, true)
}

// GatherQMM is mlx.core.gather_qmm: GatherMM with b MLX affine-quantized
// (the format of Quantize). transpose=true: wq is [..., N, K*bits/32] with
// scales and biases [..., N, K/groupSize] (stacked QuantizedLinear
// weights) and the product uses Wᵀ; transpose=false: wq is
// [..., K, N*bits/32]. The result has x's dtype. Nil biases select MXFP4
// (uint8 scales, groups of 32, 4 bits), as mode="mxfp4" does in MLX.
func GatherQMM(x, wq, scales, biases, lhs, rhs *Array, transpose bool, groupSize, bits int, sorted bool) *Array {
	const op = "GatherQMM"
	be := backendOf(op, x, wq, scales, biases, lhs, rhs)
	cols := quantCols(op, wq, scales, biases, groupSize, bits)
	if len(wq.shape) < 2 || len(x.shape) < 2 || !x.dtype.IsFloat() {
		panic(fmt.Sprintf("mlx.%s: x %v must be float with at least 2 axes and w %v at least 2-D", op, x, wq.shape))
	}
	rows := wq.shape[len(wq.shape)-2]
	k, n := cols, rows
	if !transpose {
		k, n = rows, cols
	}
	m := x.shape[len(x.shape)-2]
	if x.shape[len(x.shape)-1] != k {
		panic(fmt.Sprintf("mlx.%s: x %v does not match K=%d of w %v (transpose=%v)", op, x.shape, k, wq.shape, transpose))
	}
	g := newGatherIndex(op, be, x.shape[:len(x.shape)-2], wq.shape[:len(wq.shape)-2], lhs, rhs)
	defer g.free()
	nA, nE := shapeSize(x.shape[:len(x.shape)-2]), shapeSize(wq.shape[:len(wq.shape)-2])
	xx := Reshape(x, nA, m, k)
	ww := Reshape(wq, nE, rows, wq.shape[len(wq.shape)-1])
	ss := Reshape(scales, nE, rows, scales.shape[len(scales.shape)-1])
	var bb *Array // nil: MXFP4
	if biases != nil {
		bb = Reshape(biases, nE, rows, biases.shape[len(biases.shape)-1])
	}
	defer Free(xx, ww, ss, bb)
	var out *Array
	gm, gmOK := be.(GatherMatmuler)
	mx, mxOK := be.(MXFP4er)
	if biases != nil && gmOK {
		out = newArray(be, x.dtype, []int{g.n, m, n})
		gm.GatherQMM(xx, ww, ss, bb, g.lhs, g.rhs, transpose, groupSize, bits, out)
	} else if biases == nil && mxOK {
		out = newArray(be, x.dtype, []int{g.n, m, n})
		mx.GatherQMMMXFP4(xx, ww, ss, g.lhs, g.rhs, transpose, out)
	} else {
		out = composeGather(xx, g, m, n, func(xs *Array, e int) *Array {
			we, se := SliceAxis(ww, 0, e, e+1), SliceAxis(ss, 0, e, e+1)
			w2, s2 := Reshape(we, rows, -1), Reshape(se, rows, -1)
			var bse, b2 *Array
			if bb != nil {
				bse = SliceAxis(bb, 0, e, e+1)
				b2 = Reshape(bse, rows, -1)
			}
			defer Free(we, se, bse, w2, s2, b2)
			return QuantizedMatmul(xs, w2, s2, b2, transpose, groupSize, bits)
		})
	}
	return g.shape(out, m, n)
}

func gatherMM(op string, a, b, lhs, rhs *Array, transB bool) *Array {
	be := backendOf(op, a, b, lhs, rhs)
	if len(a.shape) < 2 || len(b.shape) < 2 {
		panic(fmt.Sprintf("mlx.%s: operands need at least 2 axes, got %v and %v", op, a.shape, b.shape))
	}
	dt := PromoteTypes(a.dtype, b.dtype)
	if !dt.IsFloat() {
		panic(fmt.Sprintf("mlx.%s: integer matmul (%v, %v) is not supported", op, a.dtype, b.dtype))
	}
	m, k := a.shape[len(a.shape)-2], a.shape[len(a.shape)-1]
	kb, n := b.shape[len(b.shape)-2], b.shape[len(b.shape)-1]
	if transB {
		kb, n = n, kb
	}
	if k != kb {
		panic(fmt.Sprintf("mlx.%s: inner dimensions differ: %v and %v", op, a.shape, b.shape))
	}
	g := newGatherIndex(op, be, a.shape[:len(a.shape)-2], b.shape[:len(b.shape)-2], lhs, rhs)
	defer g.free()
	// A 16-bit b with float32 a stays as it is, as Matmul takes it: the
	// experts are then read (and widened) one chosen expert at a time,
	// never converted all at once at every call.
	ca, cbb := castTo(a, dt), b
	if !(dt == Float32 && a.dtype == Float32 && (b.dtype == Float16 || b.dtype == BFloat16)) {
		cbb = castTo(b, dt)
	}
	aa := Reshape(ca, -1, m, k)
	bb := Reshape(cbb, -1, b.shape[len(b.shape)-2], b.shape[len(b.shape)-1])
	if ca != a {
		ca.Free()
	}
	if cbb != b {
		cbb.Free()
	}
	defer Free(aa, bb)
	var out *Array
	if gm, ok := be.(GatherMatmuler); ok {
		out = newArray(be, dt, []int{g.n, m, n})
		gm.GatherMM(aa, bb, g.lhs, g.rhs, transB, out)
	} else {
		out = composeGather(aa, g, m, n, func(xs *Array, e int) *Array {
			be := SliceAxis(bb, 0, e, e+1)
			b2 := Reshape(be, bb.shape[1], bb.shape[2])
			defer Free(be, b2)
			return matmul(op, xs, b2, transB)
		})
	}
	return g.shape(out, m, n)
}

// gatherIndex holds a gather-matmul's indices broadcast to the output
// batch and flattened to int32 [n].
type gatherIndex struct {
	lhs, rhs *Array
	batch    []int
	n        int
}

// newGatherIndex checks and broadcasts the index arrays of an operand pair
// with batch shapes aBatch and bBatch; nil indices are the arange of their
// operand's batch.
func newGatherIndex(op string, be Backend, aBatch, bBatch []int, lhs, rhs *Array) *gatherIndex {
	for _, ix := range []*Array{lhs, rhs} {
		if ix != nil && (ix.dtype.IsFloat() || ix.dtype == Bool) {
			panic(fmt.Sprintf("mlx.%s: indices must be integers, got %v", op, ix.dtype))
		}
	}
	l, r := lhs, rhs
	if l == nil {
		l = arangeOf(be, aBatch)
		defer l.Free()
	}
	if r == nil {
		r = arangeOf(be, bBatch)
		defer r.Free()
	}
	batch := mustBroadcast(op, l.shape, r.shape)
	g := &gatherIndex{batch: batch, n: shapeSize(batch)}
	g.lhs, g.rhs = flatIndex(l, batch), flatIndex(r, batch)
	return g
}

// arangeOf is 0..size(shape)-1 as int32 in shape.
func arangeOf(be Backend, shape []int) *Array {
	out := newArray(be, Int32, append([]int(nil), shape...))
	be.Arange(out, 0, 1)
	return out
}

// flatIndex broadcasts ix to batch and returns it as a contiguous int32 [n].
func flatIndex(ix *Array, batch []int) *Array {
	b := BroadcastTo(ix, batch...)
	c := AsType(b, Int32) // a copy even when already int32: contiguous
	r := Reshape(c, shapeSize(batch))
	Free(b, c)
	return r
}

func (g *gatherIndex) free() { Free(g.lhs, g.rhs) }

// shape turns a [n, M, N] result into batch + [M, N].
func (g *gatherIndex) shape(out *Array, m, n int) *Array {
	r := Reshape(out, append(append([]int(nil), g.batch...), m, n)...)
	out.Free()
	return r
}

// composeGather builds a gather-matmul from the required ops: for each run
// of equal rhs entries it takes those rows of a ([A, M, K]) and multiplies
// them by expert e through mul(rows [r*M, K], e), giving [r*M, N].
func composeGather(a *Array, g *gatherIndex, m, n int, mul func(rows *Array, e int) *Array) *Array {
	if g.n == 0 {
		return Zeros([]int{0, m, n}, a.dtype)
	}
	rhs := g.rhs.Int32s()
	var parts []*Array
	for s := 0; s < len(rhs); {
		e := s + 1
		for e < len(rhs) && rhs[e] == rhs[s] {
			e++
		}
		li := SliceAxis(g.lhs, 0, s, e)
		rows := Take(a, li, 0)
		flat := Reshape(rows, (e-s)*m, a.shape[2])
		parts = append(parts, mul(flat, int(rhs[s])))
		Free(li, rows, flat)
		s = e
	}
	cat := Concatenate(parts, 0)
	Free(parts...)
	out := Reshape(cat, g.n, m, n)
	cat.Free()
	return out
}
