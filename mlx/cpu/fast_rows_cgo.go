//go:build cgo

package cpu

/*
#cgo CFLAGS: -O3
#cgo LDFLAGS: -lm
void hark_silu_f32(const float* x, float* r, int n);
void hark_gelu_f32(const float* x, float* r, int n);
int hark_softmax_f32(const float* x, float* r, int n);
void hark_rmsnorm_f32(const float* x, const float* w, float* out, int rows, int d, float eps);
*/
import "C"

import "unsafe"

// geluRow sets r[i] = gelu(a[i]) (exact, erf-based) in float32.
func geluRow(r, a []float32) {
	if len(a) == 0 {
		return
	}
	_ = r[len(a)-1]
	C.hark_gelu_f32((*C.float)(unsafe.Pointer(&a[0])), (*C.float)(unsafe.Pointer(&r[0])), C.int(len(a)))
}

// siluRow sets r[i] = a[i]*sigmoid(a[i]) in float32 (within a few ulp).
func siluRow(r, a []float32) {
	if len(a) == 0 {
		return
	}
	_ = r[len(a)-1]
	C.hark_silu_f32((*C.float)(unsafe.Pointer(&a[0])), (*C.float)(unsafe.Pointer(&r[0])), C.int(len(a)))
}

// softmaxRowF32 is softmaxRow computed in float32; rows holding NaN or
// +Inf go to the float64 path, which defines their result.
func softmaxRowF32(dst, row []float32) {
	if len(row) == 0 {
		return
	}
	_ = dst[len(row)-1]
	if C.hark_softmax_f32((*C.float)(unsafe.Pointer(&row[0])), (*C.float)(unsafe.Pointer(&dst[0])), C.int(len(row))) != 0 {
		softmaxRow(dst, row)
	}
}

// rmsNormRowsF32 normalises rows of d float32 values (w may be nil); true
// when done here, false when the caller's Go loop must run.
func rmsNormRowsF32(x, w, out []float32, d int, eps float32) bool {
	if len(x) == 0 || d == 0 {
		return true
	}
	rows := len(x) / d
	_ = out[len(x)-1]
	var wp *C.float
	if w != nil {
		_ = w[d-1]
		wp = (*C.float)(unsafe.Pointer(&w[0]))
	}
	C.hark_rmsnorm_f32((*C.float)(unsafe.Pointer(&x[0])), wp, (*C.float)(unsafe.Pointer(&out[0])), C.int(rows), C.int(d), C.float(eps))
	return true
}
