//go:build cgo

package cpu

/*
#cgo CFLAGS: -O3
void hark_attn_scores(const float *q, const float *k, int n, int d, int ldk, float scale, float *s);
void hark_attn_values(const float *p, const float *v, int n, int dv, int ldv, float *o);
int hark_attn_decode(const float *q, int g, const float *k, const float *v, int n, int d, int dv,
                     int ldk, int ldv, float scale, float *s, float *o);
int hark_attn512_ok(void);
int hark_softmax512(float *s, int n);
int hark_attn_decode512(const float *q, int g, const float *k, const float *v, int n, int d, float scale, float *s,
                        float *o, float *lse, int more);
int hark_attn_decode512_f16(const float *q, int g, const unsigned short *k, const unsigned short *v, int n, int d, float scale,
                            float *s, float *o, float *lse, int more);
*/
import "C"

import "unsafe"

// attnScores sets s[j] = scale * q·k[j] for the first n rows of k (rows of
// d values, ldk apart).
func attnScores(q, k []float32, n, d, ldk int, scale float32, s []float32) {
	if n == 0 || d == 0 {
		clear(s[:n])
		return
	}
	_, _, _ = q[d-1], k[(n-1)*ldk+d-1], s[n-1] // bounds checks the C code cannot do
	C.hark_attn_scores((*C.float)(unsafe.Pointer(&q[0])), (*C.float)(unsafe.Pointer(&k[0])), C.int(n), C.int(d), C.int(ldk), C.float(scale), (*C.float)(unsafe.Pointer(&s[0])))
}

// attnValues sets o = sum_j p[j]*v[j] over the first n rows of v (rows of
// dv values, ldv apart).
func attnValues(p, v []float32, n, dv, ldv int, o []float32) {
	if n == 0 || dv == 0 {
		clear(o[:dv])
		return
	}
	_, _, _ = p[n-1], v[(n-1)*ldv+dv-1], o[dv-1]
	C.hark_attn_values((*C.float)(unsafe.Pointer(&p[0])), (*C.float)(unsafe.Pointer(&v[0])), C.int(n), C.int(dv), C.int(ldv), (*C.float)(unsafe.Pointer(&o[0])))
}

// haveAttnDecode: attnDecode computes (SDPA groups decode heads for it).
const haveAttnDecode = true

// attn512 is whether the CPU runs attn_decode_amd64.c.
var attn512 = C.hark_attn512_ok() != 0

// attnDecode is single-query attention for g query heads (rows of q, d
// apart) sharing one key/value head: o gets g rows of dv. s is scratch of
// g*n. False, with o unspecified, when a score row is not finite.
func attnDecode(q []float32, g int, k, v []float32, n, d, dv, ldk, ldv int, scale float32, s, o []float32) bool {
	if n == 0 || d == 0 || dv == 0 || g == 0 {
		return false
	}
	_, _, _, _, _ = q[g*d-1], k[(n-1)*ldk+d-1], v[(n-1)*ldv+dv-1], s[g*n-1], o[g*dv-1]
	if attn512 && d%16 == 0 && d <= 256 && dv == d && ldk == d && ldv == d {
		// Contiguous rows, as in a KV cache: the AVX-512 kernel.
		return C.hark_attn_decode512((*C.float)(unsafe.Pointer(&q[0])), C.int(g), (*C.float)(unsafe.Pointer(&k[0])),
			(*C.float)(unsafe.Pointer(&v[0])), C.int(n), C.int(d), C.float(scale),
			(*C.float)(unsafe.Pointer(&s[0])), (*C.float)(unsafe.Pointer(&o[0])), nil, 0) == 0
	}
	return C.hark_attn_decode((*C.float)(unsafe.Pointer(&q[0])), C.int(g), (*C.float)(unsafe.Pointer(&k[0])),
		(*C.float)(unsafe.Pointer(&v[0])), C.int(n), C.int(d), C.int(dv), C.int(ldk), C.int(ldv), C.float(scale),
		(*C.float)(unsafe.Pointer(&s[0])), (*C.float)(unsafe.Pointer(&o[0]))) == 0
}

// softmaxInPlace is the softmax of a row of scores in place: AVX-512 where
// the CPU has it (a quarter of the time of softmaxRowF32, whose loop the
// compiler leaves scalar; Whisper's encoder takes 108M of them per 30 s
// window), else softmaxRowF32, which also decides rows with a NaN or +Inf.
// The sums run in another order, so the two agree within float32
// rounding, not bit for bit.
func softmaxInPlace(row []float32) {
	if len(row) > 0 && attn512 && C.hark_softmax512((*C.float)(unsafe.Pointer(&row[0])), C.int(len(row))) == 0 {
		return
	}
	softmaxRowF32(row, row)
}

// attnBlock is the keys the AVX-512 decode kernel takes per pass (BLOCK in
// attn_decode_amd64.c): its scratch holds g rows of min(n, attnBlock).
const attnBlock = 128

// attnDecodeLSEOK reports whether attnDecodeLSE runs for heads of d.
func attnDecodeLSEOK(d int) bool { return attn512 && d%16 == 0 && d <= 256 }

// attnDecodeLSE is attnDecode for rows of keys and values d apart (a KV
// cache) that also sets lse[h] to the log-sum-exp of head h's scaled
// scores, so that results over separate ranges of keys can be merged
// (mergeDecodeParts). s is scratch of g*min(n, attnBlock). more says the
// caller takes the keys and values that follow row n next (the kernel
// fetches their start ahead). Only where attnDecodeLSEOK(d); false, with o
// and lse unspecified, when a score is not finite or all are -Inf.
func attnDecodeLSE(q []float32, g int, k, v []float32, n, d int, scale float32, s, o, lse []float32, more bool) bool {
	if n == 0 || g == 0 {
		return false
	}
	_, _, _, _, _, _ = q[g*d-1], k[n*d-1], v[n*d-1], s[g*min(n, attnBlock)-1], o[g*d-1], lse[g-1]
	return C.hark_attn_decode512((*C.float)(unsafe.Pointer(&q[0])), C.int(g), (*C.float)(unsafe.Pointer(&k[0])),
		(*C.float)(unsafe.Pointer(&v[0])), C.int(n), C.int(d), C.float(scale),
		(*C.float)(unsafe.Pointer(&s[0])), (*C.float)(unsafe.Pointer(&o[0])), (*C.float)(unsafe.Pointer(&lse[0])), cBool(more)) == 0
}

// cBool is b as a C int.
func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// attnDecodeLSEHalf is attnDecodeLSE over keys and values stored as IEEE
// f16 (a 16-bit KV cache), widened in registers as the kernel reads them;
// the same conditions (attnDecodeLSEOK) and the same result as
// attnDecodeLSE on the widened rows.
func attnDecodeLSEHalf(q []float32, g int, k, v []uint16, n, d int, scale float32, s, o, lse []float32, more bool) bool {
	if n == 0 || g == 0 {
		return false
	}
	_, _, _, _, _, _ = q[g*d-1], k[n*d-1], v[n*d-1], s[g*min(n, attnBlock)-1], o[g*d-1], lse[g-1]
	return C.hark_attn_decode512_f16((*C.float)(unsafe.Pointer(&q[0])), C.int(g), (*C.ushort)(unsafe.Pointer(&k[0])),
		(*C.ushort)(unsafe.Pointer(&v[0])), C.int(n), C.int(d), C.float(scale),
		(*C.float)(unsafe.Pointer(&s[0])), (*C.float)(unsafe.Pointer(&o[0])), (*C.float)(unsafe.Pointer(&lse[0])), cBool(more)) == 0
}
