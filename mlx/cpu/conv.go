package cpu

import (
	"hark/mlx"
	"hark/mlx/kernels"
)

// Conv1d lowers the convolution to one GEMM per batch item: the input
// windows are unrolled (im2col) into [Lout, K*Cin] rows and multiplied by
// the weight viewed as [Cout, K*Cin].
func (cpuBackend) Conv1d(x, w *mlx.Array, stride, padding, dilation int, out *mlx.Array) {
	xf, wf := f32Of(x), f32Of(w)
	n, l, cin := x.Dims()[0], x.Dims()[1], x.Dims()[2]
	cout, kw := w.Dims()[0], w.Dims()[1]
	lout := out.Dims()[1]
	r := newF32(out.Size())
	kc := kw * cin
	cols := newF32(lout * kc)
	defer putF32(cols)
	for b := 0; b < n; b++ {
		xb := xf[b*l*cin : (b+1)*l*cin]
		parallelFor(lout, kc, func(lo, hi int) {
			for t := lo; t < hi; t++ {
				row := cols[t*kc : (t+1)*kc]
				for k := 0; k < kw; k++ {
					p := t*stride - padding + k*dilation
					dst := row[k*cin : (k+1)*cin]
					if p < 0 || p >= l {
						clear(dst)
					} else {
						copy(dst, xb[p*cin:(p+1)*cin])
					}
				}
			}
		})
		if lout > 0 && cout > 0 {
			kernels.Sgemm(false, true, lout, cout, kc, 1, cols, kc, wf, kc, 0, r[b*lout*cout:], cout)
		}
	}
	setPooledF32(out, r)
}
