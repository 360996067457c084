package cpu

import (
	"math"

	"hark/mlx"
)

// The CPU backend's QuantizedDecodeAttention: one pass over each kv head's
// codes for all the query heads that share it, instead of two quantized
// matmuls, a softmax and their copies per head. A key row's codes are
// unpacked once and dotted with every query; the group's scale and bias
// come out of the sum (q·(s*c+b) = s*(q·c) + b*Σq), and the values'
// biases are summed per group and added once at the end.

// QuantizedDecodeAttention implements mlx.QuantizedDecodeAttender.
func (cpuBackend) QuantizedDecodeAttention(q *mlx.Array, k, v mlx.QuantizedKV, p mlx.QuantizedDecodeParams) *mlx.Array {
	if p.Bits != 4 && p.Bits != 8 || q.DType() != mlx.Float32 {
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
	parallelFor(b*hkv, rep*n*(d+dv), func(lo, hi int) {
		s := newF32(rep*n + rep*max(kg, vg) + max(d, dv))
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

// qDecodeHeadGo is the portable kernel: rep query rows of d (q) over n
// positions of one kv head; o gets rep rows of dv. s is scratch.
func qDecodeHeadGo(q []float32, rep, d, dv, n, g, bits int, scale float32,
	kp []uint32, ks, kb []float32, vp []uint32, vs, vb []float32, s, o []float32) {
	kg, vg := d/g, dv/g
	kw, vw := d*bits/32, dv*bits/32
	sc, qsum := s[:rep*n], s[rep*n:rep*n+rep*max(kg, vg)]
	row := s[rep*n+rep*max(kg, vg):][:max(d, dv)]
	for r := range rep {
		for gg := range kg {
			var t float32
			for _, x := range q[r*d+gg*g : r*d+(gg+1)*g] {
				t += x
			}
			qsum[r*kg+gg] = t
		}
	}
	for j := range n {
		unpackCodes(row, kp[j*kw:(j+1)*kw], bits)
		ss, bb := ks[j*kg:(j+1)*kg], kb[j*kg:(j+1)*kg]
		for r := range rep {
			qr := q[r*d : (r+1)*d]
			var acc float32
			for gg := range kg {
				var dot float32
				c, x := row[gg*g:(gg+1)*g], qr[gg*g:(gg+1)*g]
				for i := range c {
					dot += x[i] * c[i]
				}
				acc += ss[gg]*dot + bb[gg]*qsum[r*kg+gg]
			}
			sc[r*n+j] = scale * acc
		}
	}
	for r := range rep {
		pr := sc[r*n : (r+1)*n]
		m := float32(math.Inf(-1))
		for _, x := range pr {
			m = max(m, x)
		}
		var sum float32
		for i, x := range pr {
			e := float32(math.Exp(float64(x - m)))
			pr[i] = e
			sum += e
		}
		inv := 1 / sum
		for i := range pr {
			pr[i] *= inv
		}
	}
	clear(o[:rep*dv])
	bsum := qsum[:rep*vg]
	clear(bsum)
	for j := range n {
		unpackCodes(row, vp[j*vw:(j+1)*vw], bits)
		ss, bb := vs[j*vg:(j+1)*vg], vb[j*vg:(j+1)*vg]
		for r := range rep {
			pj := sc[r*n+j]
			or := o[r*dv : (r+1)*dv]
			for gg := range vg {
				c := pj * ss[gg]
				bsum[r*vg+gg] += pj * bb[gg]
				x, y := row[gg*g:(gg+1)*g], or[gg*g:(gg+1)*g]
				for i := range x {
					y[i] += c * x[i]
				}
			}
		}
	}
	for r := range rep {
		for gg := range vg {
			t := bsum[r*vg+gg]
			y := o[r*dv+gg*g : r*dv+(gg+1)*g]
			for i := range y {
				y[i] += t
			}
		}
	}
}
