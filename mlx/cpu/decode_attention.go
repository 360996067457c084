package cpu

import "hark/mlx"

// The CPU backend's DecodeAttention: RoPE straight from the projection
// into the cache row and a scratch of queries, then the grouped decode
// kernel of SDPA writing the merged heads. The rotations are ropeRows, so
// the cache holds the same bits the composed ops would write.
// DecodeAttention implements mlx.DecodeAttender.
func (cpuBackend) DecodeAttention(qkv, keys, values *mlx.Array, pos int, p mlx.DecodeAttentionParams) *mlx.Array {
	rp := p.RoPE
	h, hkv, d := p.Heads, p.KVHeads, p.HeadDim
	if !haveAttnDecode || qkv.DType() != mlx.Float32 {
		return nil // the composed ops run
	}
	kb, vb := privateBuf(keys), privateBuf(values)
	if kb == nil || vb == nil {
		return nil
	}
	cs := ropeTable(rp, 1, rp.Freqs)
	b, capacity, g, n := qkv.Dims()[0], keys.Dims()[2], h/hkv, pos+1
	x := f32Of(qkv)
	kd, vd := kb.data.([]float32), vb.data.([]float32)
	w := (h + 2*hkv) * d
	q := newF32(b * h * d)
	defer putF32(q)
	for bi := 0; bi < b; bi++ {
		row := x[bi*w : (bi+1)*w]
		ropeRows(row, q[bi*h*d:], cs, d, 1, rp, 0, h)
		for hk := 0; hk < hkv; hk++ {
			at := ((bi*hkv+hk)*capacity + pos) * d
			ropeRows(row[(h+hk)*d:], kd[at:at+d], cs, d, 1, rp, 0, 1)
			copy(vd[at:at+d], row[(h+hkv+hk)*d:(h+hkv+hk+1)*d])
		}
	}
	o := newF32(b * h * d)
	parallelFor(b*hkv, g*n*2*d, func(lo, hi int) {
		s := newF32(g * n)
		defer putF32(s)
		for gi := lo; gi < hi; gi++ {
			r0 := (gi/hkv)*h + (gi%hkv)*g // first query head of this kv head
			k, v := kd[gi*capacity*d:], vd[gi*capacity*d:]
			if attnDecode(q[r0*d:], g, k, v, n, d, d, d, d, p.Scale, s, o[r0*d:]) {
				continue
			}
			// A score that is not finite: the per-row path, as SDPA.
			for r := r0; r < r0+g; r++ {
				row := s[:n]
				attnScores(q[r*d:], k, n, d, d, p.Scale, row)
				softmaxRowF32(row, row)
				attnValues(row, v, n, d, d, o[r*d:])
			}
		}
	})
	out := mlx.NewArray(cpuBackend{}, mlx.Float32, []int{b, 1, h * d})
	setPooledF32(out, o)
	return out
}

// privateBuf returns a's float32 storage for writing in place (ownBuf, as
// SliceAssign writes), or nil when a is a view.
func privateBuf(a *mlx.Array) *cpuBuf {
	if _, ok := a.Storage().(*cpuBuf); !ok || a.DType() != mlx.Float32 {
		return nil
	}
	return ownBuf(a)
}
