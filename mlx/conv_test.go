package mlx_test

import (
	"fmt"
	"testing"

	"hark/mlx"
)

func TestConv1d(t *testing.T) {
	leakFree(t)
	r := newRNG(60)
	for _, c := range []struct{ n, l, cin, cout, k, stride, pad, dil int }{
		{1, 10, 3, 4, 3, 1, 1, 1},
		{2, 17, 5, 7, 3, 2, 1, 1}, // Whisper conv2 shape pattern: k3 s2 p1
		{1, 9, 2, 3, 2, 1, 0, 2},
		{1, 4, 1, 1, 5, 1, 0, 1}, // kernel longer than input: empty
		{3, 33, 16, 9, 1, 3, 0, 1},
	} {
		xd := randSlice(r, c.n*c.l*c.cin, -1, 1)
		wd := randSlice(r, c.cout*c.k*c.cin, -1, 1)
		x := mlx.FromSlice(xd, c.n, c.l, c.cin)
		w := mlx.FromSlice(wd, c.cout, c.k, c.cin)
		y := mlx.Conv1d(x, w, c.stride, c.pad, c.dil)
		lout := (c.l+2*c.pad-c.dil*(c.k-1)-1)/c.stride + 1
		if lout < 0 {
			lout = 0
		}
		want := make([]float64, c.n*lout*c.cout)
		for b := 0; b < c.n; b++ {
			for t0 := 0; t0 < lout; t0++ {
				for o := 0; o < c.cout; o++ {
					s := 0.0
					for kk := 0; kk < c.k; kk++ {
						p := t0*c.stride - c.pad + kk*c.dil
						if p < 0 || p >= c.l {
							continue
						}
						for ci := 0; ci < c.cin; ci++ {
							s += float64(xd[(b*c.l+p)*c.cin+ci]) * float64(wd[(o*c.k+kk)*c.cin+ci])
						}
					}
					want[(b*lout+t0)*c.cout+o] = s
				}
			}
		}
		shapeEq(t, "Conv1d", y, c.n, lout, c.cout)
		closeTo(t, fmt.Sprintf("Conv1d %+v", c), y.Float32s(), want, 1e-5, 1e-5)
		xh, wh := mlx.AsType(x, mlx.Float16), mlx.AsType(w, mlx.Float16)
		yh := mlx.Conv1d(xh, wh, c.stride, c.pad, c.dil)
		if yh.DType() != mlx.Float16 {
			t.Fatal("conv f16 dtype")
		}
		closeTo(t, fmt.Sprintf("Conv1d f16 %+v", c), yh.Float32s(), want, 1e-2, 1e-2)
		mlx.Free(x, w, y, xh, wh, yh)
	}
}
