//go:build cgo

package cpu

/*
#cgo CFLAGS: -O3
#include <stdint.h>
void hark_qattn_scores(const float *q, int rep, int d, int n, int g, int bits, float scale, const uint32_t *kp,
                       const float *ks, const float *kb, float *row, float *sc);
void hark_qattn_values(const float *p, int rep, int dv, int n, int g, int bits, const uint32_t *vp, const float *vs,
                       const float *vb, float *row, float *o);
void hark_qattn_scores512(const float *q, int rep, int d, int n, int g, int bits, float scale, const uint32_t *kp,
                          const float *ks, const float *kb, float *blk, float *sc);
void hark_qattn_values512(const float *p, int rep, int dv, int n, int g, int bits, const uint32_t *vp, const float *vs,
                          const float *vb, float *blk, float *o);
int hark_qattn_vnni_ok(void);
void hark_qattn_scores_vnni(const float *q, int rep, int d, int n, int g, int bits, float scale, const uint32_t *kp,
                            const float *ks, const float *kb, float *blk, float *sc, const void *pf, long pfbytes, int more);
int hark_qvalues_vnni_ok(void);
void hark_qattn_values_vnni(const float *p, int rep, int dv, int n, int g, int bits, const uint32_t *vp, const float *vs,
                            const float *vb, float *blk, float *o, const float *pinv);
int hark_softmax512(float *s, int n);
int hark_softmax512_lse(float *s, int n, float *lse);
int hark_softmax512_exp(float *s, int n, float *lse, float *inv);
*/
import "C"

import (
	"os"
	"unsafe"
)

// The codes are read as bytes, low first: MLX packs them so in uint32s
// on a little-endian machine (every target Hark builds for).

// q512 is whether the AVX-512 loops (quant_decode_attention_amd64.c) run
// for rows of d: row scratch of qBlock rows, as hark_attn_decode512.
func q512(d int) bool { return qWide && attn512 && d%16 == 0 && d <= 256 }

// qVNNIOK is whether the CPU has AVX-512 VNNI, for the int8 scores of
// hark_qattn_scores_vnni and the int16 values of hark_qattn_values_vnni.
var qVNNIOK = C.hark_qattn_vnni_ok() != 0

// qVNNI is whether those integer loops run: on by default where the CPU
// has them, as llama.cpp rounds q for its q8_0 cache, since they are what
// keeps decode at a long context near its speed at a short one (the
// float loops spend twice the time). The rounding's error has a bound
// that quant_scores_int8_test.go derives; HARK_KV_DOT=0 (or SetRoundKV,
// for tests held to the float result) turns them off.
var qVNNI = qVNNIOK && os.Getenv("HARK_KV_DOT") != "0"

// qDot is whether the scores of rows of d take the int8 loops: q is then
// quantized per group to int8 (see quant_decode_attention_amd64.c for the
// error that adds).
func qDot(d int) bool { return qVNNI && q512(d) }

// qVBMI is whether the CPU also has AVX-512 VBMI, which the int16 values
// (quant_values_vnni_amd64.c) use to interleave two keys' codes.
var qVBMI = C.hark_qvalues_vnni_ok() != 0

// qDotValues is whether the values of rows of dv take the int16 loops:
// groups and rows of a multiple of 32, and rows of at most 64 bytes or
// whole 64-byte chunks.
func qDotValues(dv, g, bits int) bool {
	rb := dv * bits / 8
	return qDot(dv) && qVBMI && dv%32 == 0 && g%32 == 0 && (rb <= 64 || rb%64 == 0)
}

// qScores is qScoresGo in C (quant_decode_attention.c).
func qScores(q []float32, rep, d, n, g, bits int, scale float32, kp []uint32, ks, kb, row, sc []float32) {
	qScoresThen(q, rep, d, n, g, bits, scale, kp, ks, kb, row, sc, nil, false)
}

// qScoresThen is qScores that also fetches the codes next (the values
// qValues reads after it) into cache while it computes, where the int8
// loops run: at a long context they are otherwise read from memory with
// nothing to overlap the wait. more says the caller's next part starts at
// key row n (fetched ahead too).
func qScoresThen(q []float32, rep, d, n, g, bits int, scale float32, kp []uint32, ks, kb, row, sc []float32, next []uint32, more bool) {
	kg, kw := d/g, d*bits/32
	_, _, _, _, _, _ = q[rep*d-1], kp[n*kw-1], ks[n*kg-1], kb[n*kg-1], row[qScratch(rep, d, g)-1], sc[rep*n-1]
	if qDot(d) {
		var pf unsafe.Pointer
		if len(next) > 0 {
			pf = unsafe.Pointer(&next[0])
		}
		C.hark_qattn_scores_vnni((*C.float)(unsafe.Pointer(&q[0])), C.int(rep), C.int(d), C.int(n), C.int(g), C.int(bits), C.float(scale),
			(*C.uint32_t)(unsafe.Pointer(&kp[0])), (*C.float)(unsafe.Pointer(&ks[0])), (*C.float)(unsafe.Pointer(&kb[0])),
			(*C.float)(unsafe.Pointer(&row[0])), (*C.float)(unsafe.Pointer(&sc[0])), pf, C.long(4*len(next)), cBool(more))
		return
	}
	if q512(d) {
		C.hark_qattn_scores512((*C.float)(unsafe.Pointer(&q[0])), C.int(rep), C.int(d), C.int(n), C.int(g), C.int(bits), C.float(scale),
			(*C.uint32_t)(unsafe.Pointer(&kp[0])), (*C.float)(unsafe.Pointer(&ks[0])), (*C.float)(unsafe.Pointer(&kb[0])),
			(*C.float)(unsafe.Pointer(&row[0])), (*C.float)(unsafe.Pointer(&sc[0])))
		return
	}
	C.hark_qattn_scores((*C.float)(unsafe.Pointer(&q[0])), C.int(rep), C.int(d), C.int(n), C.int(g), C.int(bits), C.float(scale),
		(*C.uint32_t)(unsafe.Pointer(&kp[0])), (*C.float)(unsafe.Pointer(&ks[0])), (*C.float)(unsafe.Pointer(&kb[0])),
		(*C.float)(unsafe.Pointer(&row[0])), (*C.float)(unsafe.Pointer(&sc[0])))
}

// qValues is qValuesGo in C.
func qValues(p []float32, rep, dv, n, g, bits int, vp []uint32, vs, vb, row, o []float32) {
	qValuesScaled(p, rep, dv, n, g, bits, vp, vs, vb, row, o, nil)
}

// qValuesScaled is qValues over softmax numerators (qSoftmaxExp) where the
// int16 loops run: head r's outputs are scaled by pinv[r]. With pinv nil,
// or where qDotValues is false (the caller then normalizes p), it is
// qValues.
func qValuesScaled(p []float32, rep, dv, n, g, bits int, vp []uint32, vs, vb, row, o, pinv []float32) {
	vg, vw := dv/g, dv*bits/32
	_, _, _, _, _, _ = p[rep*n-1], vp[n*vw-1], vs[n*vg-1], vb[n*vg-1], row[qScratch(rep, dv, g)-1], o[rep*dv-1]
	if qDotValues(dv, g, bits) {
		var pi *C.float
		if pinv != nil {
			_ = pinv[rep-1]
			pi = (*C.float)(unsafe.Pointer(&pinv[0]))
		}
		C.hark_qattn_values_vnni((*C.float)(unsafe.Pointer(&p[0])), C.int(rep), C.int(dv), C.int(n), C.int(g), C.int(bits),
			(*C.uint32_t)(unsafe.Pointer(&vp[0])), (*C.float)(unsafe.Pointer(&vs[0])), (*C.float)(unsafe.Pointer(&vb[0])),
			(*C.float)(unsafe.Pointer(&row[0])), (*C.float)(unsafe.Pointer(&o[0])), pi)
		return
	}
	if q512(dv) {
		C.hark_qattn_values512((*C.float)(unsafe.Pointer(&p[0])), C.int(rep), C.int(dv), C.int(n), C.int(g), C.int(bits),
			(*C.uint32_t)(unsafe.Pointer(&vp[0])), (*C.float)(unsafe.Pointer(&vs[0])), (*C.float)(unsafe.Pointer(&vb[0])),
			(*C.float)(unsafe.Pointer(&row[0])), (*C.float)(unsafe.Pointer(&o[0])))
		return
	}
	C.hark_qattn_values((*C.float)(unsafe.Pointer(&p[0])), C.int(rep), C.int(dv), C.int(n), C.int(g), C.int(bits),
		(*C.uint32_t)(unsafe.Pointer(&vp[0])), (*C.float)(unsafe.Pointer(&vs[0])), (*C.float)(unsafe.Pointer(&vb[0])),
		(*C.float)(unsafe.Pointer(&row[0])), (*C.float)(unsafe.Pointer(&o[0])))
}

// qSoftmax is the softmax of a row of scores in place: the AVX-512 one of
// the float32 decode kernel where it runs (the generic one is a quarter
// of the fused op's time at 4,096 positions), else softmaxRowF32, which
// also decides rows with a NaN or +Inf.
func qSoftmax(row []float32) {
	if qWide && attn512 && C.hark_softmax512((*C.float)(unsafe.Pointer(&row[0])), C.int(len(row))) == 0 {
		return
	}
	softmaxRowF32(row, row)
}

// qSoftmaxLSE is qSoftmax that also gives the row's log-sum-exp, for the
// AVX-512 loops only (qSplitOK); false, with the row unspecified, when it
// holds a NaN or +Inf or is all -Inf.
func qSoftmaxLSE(row []float32) (float32, bool) {
	var lse C.float
	ok := C.hark_softmax512_lse((*C.float)(unsafe.Pointer(&row[0])), C.int(len(row)), &lse) == 0
	return float32(lse), ok
}

// qSoftmaxExp is qSoftmaxLSE for the int16 values (qDotValues): the row is
// left as exp(s - max), and inv is 1/Σ for qValuesScaled, which saves a
// pass over the row.
func qSoftmaxExp(row []float32) (lse, inv float32, ok bool) {
	var l, i C.float
	ok = C.hark_softmax512_exp((*C.float)(unsafe.Pointer(&row[0])), C.int(len(row)), &l, &i) == 0
	return float32(l), float32(i), ok
}
