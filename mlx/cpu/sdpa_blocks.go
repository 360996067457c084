package cpu

import "hark/mlx/kernels"

// sdpaQueryBlock is the query rows of one work item of sdpaBlocks: small
// enough that a causal prefill scores few masked keys (the items on the
// diagonal waste at most half a block), large enough that the two GEMMs
// per item keep the 12x32 micro-kernel busy and packing K and V (once per
// item) stays a small share of the work.
const sdpaQueryBlock = 64

// sdpaBlocks is SDPA's prefill path where a single-threaded GEMM exists
// (attnGemm, unpacked AVX-512, or else kernels.SgemmSerial):
// the work items are (batch, head, block of sdpaQueryBlock queries), split
// over the threads, and each item runs S = scale*Q·Kᵀ over only the keys
// its queries can see, masks, softmaxes, and O = S·V, all on its thread.
// Splitting items instead of each GEMM saves the fork and join of two
// small GEMMs per head and block (at 512 tokens the 0.5B model's
// attention spent about as much time there as in the arithmetic), and the
// causal bound per block skips every fully masked block of scores.
// maskRow is SDPA's (window and explicit masks); a plain causal mask is
// applied here from the diagonal on.
func sdpaBlocks(qf, kf, vf, o []float32, koff, voff int, ks, vs []int, B, Hq, Hkv, Lq, Lk, D, Dv, off int,
	scale float32, causal, plainCausal bool, maskRow func(row []float32, b, h, i int)) {
	G := Hq / Hkv
	nb := (Lq + sdpaQueryBlock - 1) / sdpaQueryBlock
	items := B * Hq * nb
	// With the unpacked AVX-512 kernel, Kᵀ per KV head ([D, Lk]) is made
	// once, so S = Q·Kᵀ reads its rows as contiguous runs of keys.
	var kt []float32
	if haveAttnBlock {
		kt = newF32(B * Hkv * D * Lk)
		defer putF32(kt)
		kernels.ParallelFor(B*Hkv, 1, 1, func(lo, hi int) {
			for bh := lo; bh < hi; bh++ {
				b, hk := bh/Hkv, bh%Hkv
				attnTranspose(kf[koff+b*ks[0]+hk*ks[1]:], Lk, D, ks[2], kt[bh*D*Lk:], Lk)
			}
		})
	}
	kernels.ParallelFor(items, 1, 1, func(lo, hi int) {
		s := newF32(sdpaQueryBlock * Lk)
		defer putF32(s)
		for it := lo; it < hi; it++ {
			blk, bh := it%nb, it/nb
			b, h := bh/Hq, bh%Hq
			i0 := blk * sdpaQueryBlock
			i1 := min(i0+sdpaQueryBlock, Lq)
			nq := i1 - i0
			nk := Lk
			if causal {
				nk = min(Lk, max(i1+off, 0))
			}
			qo := ((b*Hq+h)*Lq + i0) * D
			oo := ((b*Hq+h)*Lq + i0) * Dv
			if nk == 0 {
				clear(o[oo : oo+nq*Dv]) // every score masked: zeros
				continue
			}
			ko := koff + b*ks[0] + (h/G)*ks[1]
			vo := voff + b*vs[0] + (h/G)*vs[1]
			sc := s[:nq*nk]
			if haveAttnBlock {
				attnGemm(nq, nk, D, scale, qf[qo:], D, kt[(b*Hkv+h/G)*D*Lk:], Lk, sc, nk)
			} else {
				kernels.SgemmSerial(false, true, nq, nk, D, scale, qf[qo:], D, kf[ko:], ks[2], 0, sc, nk)
			}
			for r := range nq {
				i := i0 + r
				row := sc[r*nk : (r+1)*nk]
				if plainCausal {
					for j := max(i+off+1, 0); j < nk; j++ {
						row[j] = negInf
					}
				} else {
					maskRow(row, b, h, i)
				}
				softmaxInPlace(row)
			}
			if haveAttnBlock {
				attnGemm(nq, Dv, nk, 1, sc, nk, vf[vo:], vs[2], o[oo:], Dv)
			} else {
				kernels.SgemmSerial(false, false, nq, Dv, nk, 1, sc, nk, vf[vo:], vs[2], 0, o[oo:], Dv)
			}
		}
	})
}
