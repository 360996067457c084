package cpu

import (
	"hark/mlx"
	"hark/mlx/kernels"
)

// A 16-bit KV cache: keys and values stored as IEEE f16 ([]uint16), half
// the bytes of float32. At long contexts decode attention is bound by
// reading the cache (a 0.5B model reads ~100 MB of float32 keys and values
// per token at 4,096 positions), so halving the bytes is what keeps decode
// near its short-context speed. Widening f16 is exact: attention over the
// 16-bit cache is attention over float32 keys and values that were each
// rounded once to f16 when written.

// decodeHalf is DecodeAttention over f16 keys and values kd, vd of
// [B, KVHeads, capacity, HeadDim]: the query heads and the new key are
// rotated in float32, the new key and value rounded to f16 into the cache
// at pos, and every head attends over positions [0, pos].
func decodeHalf(qkv *mlx.Array, kd, vd []uint16, capacity, pos int, p mlx.DecodeAttentionParams) *mlx.Array {
	rp := p.RoPE
	h, hkv, d := p.Heads, p.KVHeads, p.HeadDim
	cs := ropeTable(rp, 1, rp.Freqs)
	b, n := qkv.Dims()[0], pos+1
	x := f32Of(qkv)
	w := (h + 2*hkv) * d
	q, kr := newF32(b*h*d), newF32(d)
	defer putF32(q)
	defer putF32(kr)
	for bi := 0; bi < b; bi++ {
		row := x[bi*w : (bi+1)*w]
		ropeRows(row, q[bi*h*d:], cs, d, 1, rp, 0, h)
		for hk := 0; hk < hkv; hk++ {
			at := ((bi*hkv+hk)*capacity + pos) * d
			ropeRows(row[(h+hk)*d:], kr, cs, d, 1, rp, 0, 1)
			toF16(kd[at:at+d], kr)
			toF16(vd[at:at+d], row[(h+hkv+hk)*d:(h+hkv+hk+1)*d])
		}
	}
	o := newF32(b * h * d)
	parts := 0
	if attnDecodeLSEOK(d) {
		parts = decodeParts(b*hkv, n)
	}
	decodeSplitHalf(q, kd, vd, decodeShape{b, h, hkv, d, capacity, n}, parts, p.Scale, o)
	out := mlx.NewArray(cpuBackend{}, mlx.Float32, []int{b, 1, h * d})
	setPooledF32(out, o)
	return out
}

// toF16 rounds src into dst as IEEE f16, as a cast (mlx.AsType) does, so
// a position written by a decode step holds what prefill would write.
func toF16(dst []uint16, src []float32) {
	for i, x := range src {
		dst[i] = mlx.F32ToF16(x)
	}
}

// decodeSplitHalf is decodeSplit over f16 keys and values. With parts > 0
// (only where attnDecodeLSEOK) every one of parts ranges of every kv head
// is an item the AVX-512 kernel widens block by block in registers;
// with parts 0, and for a head
// whose scores are not all finite, the head's keys and values are widened
// into float32 scratch (F16C, NEON or Go: kernels.HalfToF32) and the
// float32 kernel or the per-row path runs on them.
func decodeSplitHalf(q []float32, kd, vd []uint16, sh decodeShape, parts int, scale float32, o []float32) {
	h, hkv, d, n := sh.h, sh.hkv, sh.d, sh.n
	g, heads := h/hkv, sh.b*hkv
	done := make([]bool, heads)
	if parts > 0 {
		done = attendParts(q, kd, vd, sh, parts, d, scale, o, attnDecodeLSEHalf)
	}
	// The heads left: widened whole, then as the float32 cache.
	parallelFor(heads, n*2*d*(g+1), func(lo, hi int) {
		var kf, vf, s []float32
		for gi := lo; gi < hi; gi++ {
			if done[gi] {
				continue
			}
			if kf == nil {
				kf, vf, s = newF32(n*d), newF32(n*d), newF32(g*n)
				defer putF32(kf)
				defer putF32(vf)
				defer putF32(s)
			}
			at := gi * sh.capacity * d
			kernels.HalfToF32(kf, kd[at:at+n*d], kernels.F16)
			kernels.HalfToF32(vf, vd[at:at+n*d], kernels.F16)
			r0 := (gi/hkv)*h + (gi%hkv)*g
			if !attnDecode(q[r0*d:], g, kf, vf, n, d, d, d, d, scale, s, o[r0*d:]) {
				decodeRows(q[r0*d:], g, kf, vf, n, d, scale, s, o[r0*d:])
			}
		}
	})
}
