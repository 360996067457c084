package cpu

import (
	"math"
	"runtime"

	"hark/mlx"
	"hark/mlx/kernels"
)

// sdpaScoreBudget caps the float32 score matrix of one GEMM block (16 MiB),
// so long prefills are processed in query chunks.
const sdpaScoreBudget = 1 << 22

// sdpaRowwiseMaxQueries is the largest query length handled row by row
// (decode and short speculative steps); longer ones use GEMMs.
const sdpaRowwiseMaxQueries = 4

// sdpaCausalChunk is the query block of long causal prefills.
const sdpaCausalChunk = 128

// SDPA runs, per batch and KV head, S = scale*Q·Kᵀ with one GEMM over all
// the query heads sharing that KV head, masks and softmaxes S row by row,
// then O = S·V with a second GEMM. Causal masks also shrink the key range
// of each block to the keys any of its queries can see. Where a
// single-threaded GEMM exists (haveAttnBlock or kernels.SgemmSerialOK), queries past the
// decode sizes go to sdpaBlocks instead, which splits blocks, not GEMMs,
// over the threads.
func (cpuBackend) SDPA(q, k, v *mlx.Array, scale float32, mask mlx.Mask, out *mlx.Array) {
	qf := f32Of(q)
	// K and V may be views (a KV-cache prefix): read them in place.
	kf, koff, ks := f32Strided(k)
	vf, voff, vs := f32Strided(v)
	B, Hq, Lq, D := q.Dims()[0], q.Dims()[1], q.Dims()[2], q.Dims()[3]
	Hkv, Lk, Dv := k.Dims()[1], k.Dims()[2], v.Dims()[3]
	G := Hq / Hkv
	off := Lk - Lq
	o := newF32(out.Size())

	var mAdd []float32
	var mBool []uint8
	var ms []int // mask strides over [B,Hq,Lq,Lk] (0 where broadcast)
	if mask.Array != nil {
		ma := mask.Array
		if ma.DType() == mlx.Bool {
			mBool = cb(ma).data.([]uint8)
		} else {
			mAdd = f32Of(ma)
		}
		ms = make([]int, 4)
		rs := mlx.RowStrides(ma.Dims())
		for i, d := range ma.Dims() {
			if d != 1 {
				ms[4-len(ma.Dims())+i] = rs[i]
			}
		}
	}

	// maskRow applies the causal/window and explicit masks to the scores
	// of query i of head h in batch b (key j at row[j]).
	maskRow := func(row []float32, b, h, i int) {
		if mask.Causal {
			for j := range row {
				if !mlx.CausalAllowed(i, j, off, mask.Window) {
					row[j] = negInf
				}
			}
		}
		if ms != nil {
			base := b*ms[0] + h*ms[1] + i*ms[2]
			for j := range row {
				at := base + j*ms[3]
				if mBool != nil {
					if mBool[at] == 0 {
						row[j] = negInf
					}
				} else {
					row[j] += mAdd[at]
				}
			}
		}
	}

	if Lq <= sdpaRowwiseMaxQueries {
		// Decode: a handful of queries. Each (batch, head, query) row is
		// independent; vectorised dot products and value sums beat
		// setting up a GEMM for m = heads-per-group rows.
		decodeRow := func(r int, s []float32) {
			i := r % Lq
			h := (r / Lq) % Hq
			b := r / (Lq * Hq)
			nk := Lk
			if mask.Causal {
				nk = min(Lk, max(i+off+1, 0))
			}
			orow := o[r*Dv : (r+1)*Dv]
			if nk == 0 {
				return
			}
			row := s[:nk]
			attnScores(qf[r*D:], kf[koff+b*ks[0]+(h/G)*ks[1]:], nk, D, ks[2], scale, row)
			// nk already hides the future keys; only a window or
			// an explicit mask has more to do.
			if mask.Window > 0 || ms != nil {
				maskRow(row, b, h, i)
			}
			softmaxRowF32(row, row)
			attnValues(row, vf[voff+b*vs[0]+(h/G)*vs[1]:], nk, Dv, vs[2], orow)
		}
		// One query per head and nothing to mask (causal hides nothing
		// from the last position): the G heads of a KV head go together,
		// so its keys and values are read once. The paths agree within
		// float32 rounding (bit for bit unless the AVX-512 kernel runs);
		// grouping runs only where it still fills the processors (or
		// would run inline anyway), since it has G times fewer pieces.
		grouped := haveAttnDecode && Lq == 1 && G > 1 && Lk > 0 && mask.Window == 0 && ms == nil &&
			(B*Hkv >= runtime.GOMAXPROCS(0) || serial(B*Hq*Lq, Lk*(D+Dv)))
		if grouped {
			parallelFor(B*Hkv, G*Lk*(D+Dv), func(lo, hi int) {
				s := newF32(G * Lk)
				defer putF32(s)
				for gi := lo; gi < hi; gi++ {
					b, hk := gi/Hkv, gi%Hkv
					r0 := b*Hq + hk*G
					if !attnDecode(qf[r0*D:], G, kf[koff+b*ks[0]+hk*ks[1]:], vf[voff+b*vs[0]+hk*vs[1]:],
						Lk, D, Dv, ks[2], vs[2], scale, s, o[r0*Dv:]) {
						for r := r0; r < r0+G; r++ {
							decodeRow(r, s)
						}
					}
				}
			})
			setPooledF32(out, o)
			return
		}
		parallelFor(B*Hq*Lq, Lk*(D+Dv), func(lo, hi int) {
			s := newF32(Lk)
			defer putF32(s)
			for r := lo; r < hi; r++ {
				decodeRow(r, s)
			}
		})
		setPooledF32(out, o)
		return
	}

	if haveAttnBlock || kernels.SgemmSerialOK() {
		plainCausal := mask.Causal && mask.Window == 0 && ms == nil
		sdpaBlocks(qf, kf, vf, o, koff, voff, ks, vs, B, Hq, Hkv, Lq, Lk, D, Dv, off, scale, mask.Causal, plainCausal, maskRow)
		setPooledF32(out, o)
		return
	}

	type block struct{ h0, nh, i0, i1 int }
	var blocks []block
	// Long causal prefills go in query chunks so each chunk only scores
	// the keys it can see (about half the work); otherwise all heads of a
	// KV group share one GEMM when the scores fit the budget.
	causalChunks := mask.Causal && Lq > 2*sdpaCausalChunk
	if !causalChunks && (G*Lq*Lk <= sdpaScoreBudget || Lq == 0) {
		for g := 0; g < Hkv; g++ {
			blocks = append(blocks, block{g * G, G, 0, Lq})
		}
	} else {
		chunk := max(sdpaScoreBudget/max(Lk, 1), 1)
		if causalChunks {
			chunk = min(chunk, sdpaCausalChunk)
		}
		for h := 0; h < Hq; h++ {
			for i := 0; i < Lq; i += chunk {
				blocks = append(blocks, block{h, 1, i, min(i+chunk, Lq)})
			}
		}
	}
	var s []float32
	for b := 0; b < B; b++ {
		for _, bl := range blocks {
			hkv := bl.h0 / G
			nq := bl.i1 - bl.i0
			m := bl.nh * nq
			nk := Lk
			if mask.Causal {
				nk = min(Lk, max(bl.i1+off, 0))
			}
			qo := ((b*Hq+bl.h0)*Lq + bl.i0) * D
			ko := koff + b*ks[0] + hkv*ks[1]
			vo := voff + b*vs[0] + hkv*vs[1]
			oo := ((b*Hq+bl.h0)*Lq + bl.i0) * Dv
			orows := o[oo : oo+m*Dv]
			if nk == 0 || m == 0 {
				continue // every score masked: zeros
			}
			if cap(s) < m*nk {
				putF32(s)
				s = newF32(m * nk) // recycled: 9 MB per head in Whisper's encoder
			}
			s = s[:m*nk]
			kernels.Sgemm(false, true, m, nk, D, scale, qf[qo:], D, kf[ko:], ks[2], 0, s, nk)
			parallelFor(m, nk*8, func(lo, hi int) {
				for r := lo; r < hi; r++ {
					h := bl.h0 + r/nq
					i := bl.i0 + r%nq
					row := s[r*nk : (r+1)*nk]
					maskRow(row, b, h, i)
					// float32 SIMD (the decode path's): the float64
					// loop cost as much as the two GEMMs around it
					// in Whisper's encoder (1500x1500 scores per head).
					softmaxInPlace(row)
				}
			})
			kernels.Sgemm(false, false, m, Dv, nk, 1, s, nk, vf[vo:], vs[2], 0, orows, Dv)
		}
	}
	putF32(s)
	setPooledF32(out, o)
}

// f32Strided returns a float32 array's storage, element offset and strides
// without copying when it is a view whose last axis is contiguous; anything
// else is converted to contiguous float32 first.
func f32Strided(x *mlx.Array) ([]float32, int, []int) {
	if v, ok := x.Storage().(*cpuView); ok && x.DType() == mlx.Float32 && (v.strides[len(v.strides)-1] == 1 || x.Dims()[len(x.Dims())-1] == 1) {
		forward := true
		for _, st := range v.strides {
			forward = forward && st >= 0
		}
		if forward {
			return v.buf.data.([]float32), v.off, v.strides
		}
	}
	return f32Of(x), 0, mlx.RowStrides(x.Dims())
}

// negInf is the additive value of a masked score.
var negInf = float32(math.Inf(-1))
