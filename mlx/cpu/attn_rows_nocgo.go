//go:build !cgo

package cpu

// Portable versions of the attention inner loops in attn_rows.c.

func attnScores(q, k []float32, n, d, ldk int, scale float32, s []float32) {
	q = q[:d]
	for j := 0; j < n; j++ {
		kr := k[j*ldk : j*ldk+d]
		var a0, a1, a2, a3 float32
		i := 0
		for ; i+4 <= d; i += 4 {
			a0 += q[i] * kr[i]
			a1 += q[i+1] * kr[i+1]
			a2 += q[i+2] * kr[i+2]
			a3 += q[i+3] * kr[i+3]
		}
		for ; i < d; i++ {
			a0 += q[i] * kr[i]
		}
		s[j] = scale * ((a0 + a2) + (a1 + a3))
	}
}

func attnValues(p, v []float32, n, dv, ldv int, o []float32) {
	o = o[:dv]
	clear(o)
	for j := 0; j < n; j++ {
		pj := p[j]
		if pj == 0 {
			continue
		}
		vr := v[j*ldv : j*ldv+dv]
		for i := range o {
			o[i] += pj * vr[i]
		}
	}
}

// haveAttnDecode: without cgo the per-row loops are the only path.
const haveAttnDecode = false

// attnDecode reports false: without cgo the per-row loops are the only path.
func attnDecode(q []float32, g int, k, v []float32, n, d, dv, ldk, ldv int, scale float32, s, o []float32) bool {
	return false
}

// softmaxInPlace is the softmax of a row of scores in place.
func softmaxInPlace(row []float32) { softmaxRowF32(row, row) }

// attnBlock: attn_rows_cgo.go's; unused here.
const attnBlock = 128

// attnDecodeLSEOK: without cgo there is no kernel that gives the
// log-sum-exp, so decode attention is not split along the keys.
func attnDecodeLSEOK(d int) bool { return false }

func attnDecodeLSE(q []float32, g int, k, v []float32, n, d int, scale float32, s, o, lse []float32, more bool) bool {
	return false
}

func attnDecodeLSEHalf(q []float32, g int, k, v []uint16, n, d int, scale float32, s, o, lse []float32, more bool) bool {
	return false
}
