package cpu

import "hark/mlx"

// QuantizedDecodeAttention with each kv head's positions cut into ranges
// that the threads share (decodeSplit's flash decoding, for the quantized
// caches): a 0.5B model's 2 kv heads are otherwise one item per thread.

// qDecodeSplit sets o ([B, Hq, 1, dv]) from parts ranges of every kv
// head's sh.n positions, each range's heads' outputs weighed by their
// log-sum-exps (mergeDecodeParts). A kv head with a score that is not
// finite is redone whole by qDecodeHead, as without the split.
func qDecodeSplit(qd []float32, k, v mlx.QuantizedKV, p mlx.QuantizedDecodeParams, sh decodeShape, dv, parts int, o []float32) {
	hq, hkv, d, n, capacity := sh.h, sh.hkv, sh.d, sh.n, sh.capacity
	rep, heads, g, bits := hq/hkv, sh.b*hkv, p.Group, p.Bits
	kp, vp := cb(k.Packed).data.([]uint32), cb(v.Packed).data.([]uint32)
	ks, kb, vs, vb := f32Of(k.Scales), f32Of(k.Biases), f32Of(v.Scales), f32Of(v.Biases)
	kw, vw, kg, vg := d*bits/32, dv*bits/32, d/g, dv/g
	per, parts := splitRange(n, parts)
	items := heads * parts
	po, lse := newF32(items*rep*dv), newF32(items*rep)
	defer putF32(po)
	defer putF32(lse)
	ok := make([]bool, items)
	scratch := rep*per + qScratch(rep, max(d, dv), g)
	// The int16 values take the softmax's numerators and scale their sums.
	numer := qDotValues(dv, g, bits)
	parallelFor(items, rep*per*(d+dv), func(lo, hi int) {
		s := newF32(scratch)
		defer putF32(s)
		var inv []float32 // each head's 1/Σ, for the int16 values only
		if numer {
			inv = make([]float32, rep)
		}
		for it := lo; it < hi; it++ {
			gi, j0 := it/parts, it%parts*per
			m := min(j0+per, n) - j0
			r0 := (gi/hkv)*hq + (gi%hkv)*rep
			at := gi*capacity + j0
			sc, row := s[:rep*m], s[rep*m:scratch]
			more := it+1 < hi && (it+1)/parts == gi // this thread takes the next part too
			qScoresThen(qd[r0*d:(r0+rep)*d], rep, d, m, g, bits, p.Scale, kp[at*kw:(at+m)*kw], ks[at*kg:(at+m)*kg], kb[at*kg:(at+m)*kg], row, sc, vp[at*vw:(at+m)*vw], more)
			ok[it] = true
			for r := range rep {
				var l float32
				var fine bool
				if numer {
					l, inv[r], fine = qSoftmaxExp(sc[r*m : (r+1)*m])
				} else {
					l, fine = qSoftmaxLSE(sc[r*m : (r+1)*m])
				}
				if !fine {
					ok[it] = false
					break
				}
				lse[it*rep+r] = l
			}
			if ok[it] {
				qValuesScaled(sc, rep, dv, m, g, bits, vp[at*vw:(at+m)*vw], vs[at*vg:(at+m)*vg], vb[at*vg:(at+m)*vg], row, po[it*rep*dv:(it+1)*rep*dv], inv)
			}
		}
	})
	var s []float32
	for gi := range heads {
		r0 := (gi/hkv)*hq + (gi%hkv)*rep
		it0 := gi * parts
		if allTrue(ok[it0 : it0+parts]) {
			mergeDecodeParts(po[it0*rep*dv:], lse[it0*rep:], parts, rep, dv, o[r0*dv:(r0+rep)*dv])
			continue
		}
		if s == nil {
			s = newF32(rep*n + qScratch(rep, max(d, dv), g))
			defer putF32(s)
		}
		at := gi * capacity
		qDecodeHead(qd[r0*d:(r0+rep)*d], rep, d, dv, n, g, bits, p.Scale,
			kp[at*kw:(at+n)*kw], ks[at*kg:(at+n)*kg], kb[at*kg:(at+n)*kg],
			vp[at*vw:(at+n)*vw], vs[at*vg:(at+n)*vg], vb[at*vg:(at+n)*vg],
			s, o[r0*dv:(r0+rep)*dv])
	}
}
