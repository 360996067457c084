package cpu

import "hark/mlx"

// The CPU backend's QuantizedDecodeAttention: one pass over each kv head's
// codes for all the query heads that share it, instead of two quantized
// matmuls, a softmax and their copies per head. A key or value row is
// dequantized once (the AVX-512 loops only convert the codes, applying
// scales and biases to the sums), into a scratch that stays in L1, and used
// by every query head. Rows of codes are a quarter (8 bits) or an eighth (4 bits)
// of the float32 cache's bytes, which is what decode at long context reads.

// qBlock is the rows a kernel dequantizes at a time (its scratch).
const qBlock = 64

// qScratch is the scratch a kernel needs besides the scores, for rows of
// w values in groups of g: qBlock rows, and for the AVX-512 values loop
// (values_t) the block's weights, scales and biases and the heads' bias
// sums.
func qScratch(rep, w, g int) int {
	ng := max(w/g, 1)
	return max(qBlock*w+(rep+2)*ng*qBlock+rep*ng*16+w, qDotScratch(rep, w, g))
}

// qDotScratch is what the int8 scores (hark_qattn_scores_vnni) need: 16
// rows of codes as w/4 planes of 16 words (64-byte aligned), 16 scales and
// biases per group, each head's int8 q and 3 floats per head and group;
// or the int16 values (hark_qattn_values_vnni): 4 permutation vectors,
// per head and group qBlock/2 pairs of weights, a step and 16 bias sums,
// the block's scales and biases per group, and per head w sums.
func qDotScratch(rep, w, g int) int {
	ng := max(w/g, 1)
	return max(16*w/4+16+32*ng+3*rep*ng+rep*w/4, 16+64+rep*(ng*(qBlock/2+17)+w)+2*ng*qBlock)
}

// qWide lets the widest loops run where the CPU has them; tests turn it
// off to check the portable loops on the same machine.
var qWide = true

// QuantizedDecodeAttention implements mlx.QuantizedDecodeAttender.
func (cpuBackend) QuantizedDecodeAttention(q *mlx.Array, k, v mlx.QuantizedKV, p mlx.QuantizedDecodeParams) *mlx.Array {
	if p.Bits != 4 && p.Bits != 8 || p.Group%8 != 0 || q.DType() != mlx.Float32 {
		return nil
	}
	for _, a := range []*mlx.Array{k.Scales, k.Biases, v.Scales, v.Biases} {
		if a.DType() != mlx.Float32 {
			return nil
		}
	}
	b, hq, d := q.Dims()[0], q.Dims()[1], q.Dims()[3]
	hkv, capacity := k.Packed.Dims()[1], k.Packed.Dims()[2]
	dv := v.Packed.Dims()[3] * 32 / p.Bits
	rep, n, g := hq/hkv, p.N, p.Group
	qd := f32Of(q)
	kp, vp := cb(k.Packed).data.([]uint32), cb(v.Packed).data.([]uint32)
	ks, kb, vs, vb := f32Of(k.Scales), f32Of(k.Biases), f32Of(v.Scales), f32Of(v.Biases)
	kw, vw := d*p.Bits/32, dv*p.Bits/32 // words per row
	kg, vg := d/g, dv/g                 // groups per row
	o := newF32(b * hq * dv)
	if parts := decodeParts(b*hkv, n); parts > 1 && q512(d) && q512(dv) {
		qDecodeSplit(qd, k, v, p, decodeShape{b, hq, hkv, d, capacity, n}, dv, parts, o)
	} else {
		parallelFor(b*hkv, rep*n*(d+dv), func(lo, hi int) {
			s := newF32(rep*n + qScratch(rep, max(d, dv), g))
			defer putF32(s)
			for gi := lo; gi < hi; gi++ {
				r0 := (gi/hkv)*hq + (gi%hkv)*rep // first query head of this kv head
				kr, vr := gi*capacity, gi*capacity
				qDecodeHead(qd[r0*d:(r0+rep)*d], rep, d, dv, n, g, p.Bits, p.Scale,
					kp[kr*kw:(kr+n)*kw], ks[kr*kg:(kr+n)*kg], kb[kr*kg:(kr+n)*kg],
					vp[vr*vw:(vr+n)*vw], vs[vr*vg:(vr+n)*vg], vb[vr*vg:(vr+n)*vg],
					s, o[r0*dv:(r0+rep)*dv])
			}
		})
	}
	out := mlx.NewArray(cpuBackend{}, mlx.Float32, []int{b, hq, 1, dv})
	setPooledF32(out, o)
	return out
}

// unpackCodes writes the w values of a row of codes as floats.
func unpackCodes(dst []float32, codes []uint32, bits int) {
	if bits == 8 {
		for i, c := range codes {
			t := dst[4*i : 4*i+4]
			t[0], t[1], t[2], t[3] = float32(c&0xff), float32(c>>8&0xff), float32(c>>16&0xff), float32(c>>24)
		}
		return
	}
	for i, c := range codes {
		t := dst[8*i : 8*i+8]
		for j := range t {
			t[j] = float32(c >> (4 * j) & 0xf)
		}
	}
}

// qDecodeHead is rep query rows of d (q) over n positions of one kv head;
// o gets rep rows of dv. s is scratch of rep*n + qScratch(rep, max(d, dv), g).
func qDecodeHead(q []float32, rep, d, dv, n, g, bits int, scale float32,
	kp []uint32, ks, kb []float32, vp []uint32, vs, vb []float32, s, o []float32) {
	sc, row := s[:rep*n], s[rep*n:rep*n+qScratch(rep, max(d, dv), g)]
	qScores(q, rep, d, n, g, bits, scale, kp, ks, kb, row, sc)
	if !qDotValues(dv, g, bits) {
		for r := range rep {
			qSoftmax(sc[r*n : (r+1)*n])
		}
		qValues(sc, rep, dv, n, g, bits, vp, vs, vb, row, o)
		return
	}
	// The int16 values take the softmax's numerators and scale their sums.
	var buf [32]float32
	inv := buf[:]
	if rep > len(buf) {
		inv = make([]float32, rep)
	}
	for r := range rep {
		x := sc[r*n : (r+1)*n]
		var ok bool
		if _, inv[r], ok = qSoftmaxExp(x); !ok {
			softmaxRowF32(x, x) // decides a row with a NaN or +Inf, as qSoftmax
			inv[r] = 1
		}
	}
	qValuesScaled(sc, rep, dv, n, g, bits, vp, vs, vb, row, o, inv)
}

// dequantRow writes a row of codes as floats, s*c+b per group of g.
func dequantRow(dst []float32, codes []uint32, ss, bb []float32, g, bits int) {
	unpackCodes(dst, codes, bits)
	for gg, sv := range ss {
		bv := bb[gg]
		x := dst[gg*g : (gg+1)*g]
		for i := range x {
			x[i] = sv*x[i] + bv
		}
	}
}

// qScoresGo sets sc[r*n+j] = scale * q[r]·dequant(k[j]).
func qScoresGo(q []float32, rep, d, n, g, bits int, scale float32, kp []uint32, ks, kb, row, sc []float32) {
	kg, kw := d/g, d*bits/32
	row = row[:d]
	for j := range n {
		dequantRow(row, kp[j*kw:(j+1)*kw], ks[j*kg:(j+1)*kg], kb[j*kg:(j+1)*kg], g, bits)
		for r := range rep {
			qr := q[r*d : (r+1)*d]
			var a0, a1, a2, a3 float32
			for i := 0; i < d; i += 4 {
				a0 += qr[i] * row[i]
				a1 += qr[i+1] * row[i+1]
				a2 += qr[i+2] * row[i+2]
				a3 += qr[i+3] * row[i+3]
			}
			sc[r*n+j] = scale * ((a0 + a2) + (a1 + a3))
		}
	}
}

// qValuesGo sets o[r] = Σj p[r*n+j] * dequant(v[j]).
func qValuesGo(p []float32, rep, dv, n, g, bits int, vp []uint32, vs, vb, row, o []float32) {
	vg, vw := dv/g, dv*bits/32
	row = row[:dv]
	clear(o[:rep*dv])
	for j := range n {
		dequantRow(row, vp[j*vw:(j+1)*vw], vs[j*vg:(j+1)*vg], vb[j*vg:(j+1)*vg], g, bits)
		for r := range rep {
			pj := p[r*n+j]
			or := o[r*dv : (r+1)*dv]
			for i, x := range row {
				or[i] += pj * x
			}
		}
	}
}

// SetRoundKV implements mlx.KVRounder.
func (cpuBackend) SetRoundKV(on bool) (restore func()) {
	was := qVNNI
	qVNNI = on && qVNNIOK
	return func() { qVNNI = was }
}
