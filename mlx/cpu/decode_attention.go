package cpu

import (
	"math"
	"runtime"

	"hark/mlx"
)

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
	if keys.DType() == mlx.Float16 && values.DType() == mlx.Float16 {
		kb, vb := privateBufOf(keys, mlx.Float16), privateBufOf(values, mlx.Float16)
		if kb == nil || vb == nil {
			return nil
		}
		return decodeHalf(qkv, kb.data.([]uint16), vb.data.([]uint16), keys.Dims()[2], pos, p)
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
	if parts := decodeParts(b*hkv, n); parts > 1 && attnDecodeLSEOK(d) {
		decodeSplit(q, kd, vd, decodeShape{b, h, hkv, d, capacity, n}, parts, p.Scale, o)
	} else {
		parallelFor(b*hkv, g*n*2*d, func(lo, hi int) {
			s := newF32(g * n)
			defer putF32(s)
			for gi := lo; gi < hi; gi++ {
				r0 := (gi/hkv)*h + (gi%hkv)*g // first query head of this kv head
				k, v := kd[gi*capacity*d:], vd[gi*capacity*d:]
				if !attnDecode(q[r0*d:], g, k, v, n, d, d, d, d, p.Scale, s, o[r0*d:]) {
					decodeRows(q[r0*d:], g, k, v, n, d, p.Scale, s, o[r0*d:])
				}
			}
		})
	}
	out := mlx.NewArray(cpuBackend{}, mlx.Float32, []int{b, 1, h * d})
	setPooledF32(out, o)
	return out
}

// privateBuf returns a's float32 storage for writing in place (ownBuf, as
// SliceAssign writes), or nil when a is a view.
func privateBuf(a *mlx.Array) *cpuBuf { return privateBufOf(a, mlx.Float32) }

// privateBufOf is privateBuf for storage of dtype dt.
func privateBufOf(a *mlx.Array, dt mlx.DType) *cpuBuf {
	if _, ok := a.Storage().(*cpuBuf); !ok || a.DType() != dt {
		return nil
	}
	return ownBuf(a)
}

// decodeRows is attention for g query heads over n keys one row at a time
// (scores, softmax, values), as SDPA: the path for a score that is not
// finite. s is scratch of n.
func decodeRows(q []float32, g int, k, v []float32, n, d int, scale float32, s, o []float32) {
	for r := range g {
		row := s[:n]
		attnScores(q[r*d:], k, n, d, d, scale, row)
		softmaxRowF32(row, row)
		attnValues(row, v, n, d, d, o[r*d:])
	}
}

// decodeSplitMin is the fewest keys worth a range of their own: below it
// the merge and the hand-off cost more than evening out the threads gains.
const decodeSplitMin = 512

// decodeParts is how many ranges of keys each of heads kv heads' n keys
// is cut into. A 0.5B model has 2 kv heads per layer, so with one item
// per kv head a thread that starts late or runs slower (a busy machine)
// holds up the other for a whole head at 4,096 keys; ranges of keys give
// the threads several items each to share out, and a model with a single
// kv head uses every thread at all.
func decodeParts(heads, n int) int {
	want := (4*runtime.GOMAXPROCS(0) + heads - 1) / heads
	return max(1, min(want, n/decodeSplitMin))
}

// splitRange cuts n keys into at most parts ranges of per keys, whole
// blocks of the kernel each (the last may be shorter), and says how many
// ranges that makes.
func splitRange(n, parts int) (per, ranges int) {
	per = (n + parts - 1) / parts
	per = (per + attnBlock - 1) / attnBlock * attnBlock
	return per, (n + per - 1) / per
}

// decodeShape is the dimensions of DecodeAttention: batch, query heads, kv
// heads, head size, the caches' capacity and the keys attended.
type decodeShape struct{ b, h, hkv, d, capacity, n int }

// decodeSplit is DecodeAttention's attention with each kv head's keys cut
// into ranges (flash decoding, attendParts); a head whose scores are not
// all finite takes the per-row path.
func decodeSplit(q, kd, vd []float32, sh decodeShape, parts int, scale float32, o []float32) {
	h, hkv, d, n := sh.h, sh.hkv, sh.d, sh.n
	g := h / hkv
	var s []float32
	for gi, merged := range attendParts(q, kd, vd, sh, parts, 2*d, scale, o, attnDecodeLSE) {
		if merged {
			continue
		}
		if s == nil {
			s = newF32(n)
			defer putF32(s)
		}
		r0 := (gi/hkv)*h + (gi%hkv)*g
		k, v := kd[gi*sh.capacity*d:], vd[gi*sh.capacity*d:]
		decodeRows(q[r0*d:], g, k, v, n, d, scale, s, o[r0*d:])
	}
}

// attendParts cuts each kv head's keys into ranges: every range of every
// kv head is an item for the threads, which attend (the float32 or the
// f16 cache's kernel) turns into its heads' outputs and their scores'
// log-sum-exp, and mergeDecodeParts weighs a head's items into o. It
// returns which heads it set: a head with an item whose scores were not
// all finite is left for the caller's fallback. keyCost is the work per
// key and query head, for parallelFor's split.
func attendParts[T float32 | uint16](q []float32, kd, vd []T, sh decodeShape, parts, keyCost int, scale float32, o []float32,
	attend func(q []float32, g int, k, v []T, n, d int, scale float32, s, po, lse []float32, more bool) bool) []bool {
	h, hkv, d, n := sh.h, sh.hkv, sh.d, sh.n
	g, heads := h/hkv, sh.b*hkv
	per, parts := splitRange(n, parts)
	items := heads * parts
	po, lse := newF32(items*g*d), newF32(items*g)
	defer putF32(po)
	defer putF32(lse)
	ok := make([]bool, items)
	parallelFor(items, g*per*keyCost, func(lo, hi int) {
		s := newF32(g * min(per, attnBlock))
		defer putF32(s)
		for it := lo; it < hi; it++ {
			gi, j0 := it/parts, it%parts*per
			j1 := min(j0+per, n)
			r0 := (gi/hkv)*h + (gi%hkv)*g
			at := (gi*sh.capacity + j0) * d
			// more: this thread's next item is the range that follows.
			more := it+1 < hi && (it+1)/parts == gi
			ok[it] = attend(q[r0*d:], g, kd[at:at+(j1-j0)*d], vd[at:at+(j1-j0)*d], j1-j0, d, scale, s, po[it*g*d:], lse[it*g:], more)
		}
	})
	merged := make([]bool, heads)
	for gi := range heads {
		r0, it0 := (gi/hkv)*h+(gi%hkv)*g, gi*parts
		if merged[gi] = allTrue(ok[it0 : it0+parts]); merged[gi] {
			mergeDecodeParts(po[it0*g*d:], lse[it0*g:], parts, g, d, o[r0*d:r0*d+g*d])
		}
	}
	return merged
}

// mergeDecodeParts sets o (g rows of d) from parts results over ranges of
// keys: part i's rows po[(i*g + r)*d:] and log-sum-exps lse[i*g + r]. Each
// part is its own softmax, so head r's full result weighs part i by
// exp(lse_i - lse) where lse is the log-sum-exp over all of them.
func mergeDecodeParts(po, lse []float32, parts, g, d int, o []float32) {
	w := make([]float64, parts)
	for r := range g {
		mx := math.Inf(-1)
		for i := range parts {
			mx = max(mx, float64(lse[i*g+r]))
		}
		var sum float64
		for i := range parts {
			w[i] = math.Exp(float64(lse[i*g+r]) - mx)
			sum += w[i]
		}
		or := o[r*d : (r+1)*d]
		clear(or)
		for i := range parts {
			wi := float32(w[i] / sum)
			for c, x := range po[(i*g+r)*d : (i*g+r+1)*d] {
				or[c] += wi * x
			}
		}
	}
}

func allTrue(b []bool) bool {
	for _, x := range b {
		if !x {
			return false
		}
	}
	return true
}
