package mlx_test

import (
	"fmt"
	"testing"

	"hark/mlx"
	"hark/mlx/kernels"
)

// TestPackQuantized: a packed matrix gives what the MLX arrays it came
// from give: bit-identical rows (Take, Dequantize) and matmuls within the
// quantized kernels' tolerance, for batch shapes and a bf16 x; formats
// without a packed layout stay unpacked.
func TestPackQuantized(t *testing.T) {
	leakFree(t)
	if !kernels.PackedQ4Supported(128, 64) {
		t.Skipf("no packed 4-bit kernel on this CPU (%s)", kernels.Features())
	}
	r := newRNG(74)
	for _, gs := range []int{64, 128} {
		const n, k = 37, 384
		w := mlx.FromSlice(randSlice(r, n*k, -1, 1), n, k)
		wq, s, b, err := mlx.Quantize(w, gs, 4)
		if err != nil {
			t.Fatal(err)
		}
		p := mlx.PackQuantized(wq, s, b, gs, 4)
		if p == nil {
			t.Fatalf("gs=%d: not packed", gs)
		}
		if rows, cols := p.Dims(); rows != n || cols != k {
			t.Fatalf("packed dims [%d, %d], want [%d, %d]", rows, cols, n, k)
		}
		deq, pdeq := mlx.Dequantize(wq, s, b, gs, 4), p.Dequantize()
		closeTo(t, fmt.Sprintf("gs=%d Dequantize", gs), pdeq.Float32s(), f64s(deq.Float32s()), 0, 0)

		ids := mlx.FromSlice([]int32{3, 0, int32(n - 1), -1}, 2, 2)
		e, pe := mlx.TakeQuantized(wq, s, b, ids, gs, 4), p.Take(ids)
		shapeEq(t, "PackedQuant.Take", pe, 2, 2, k)
		closeTo(t, fmt.Sprintf("gs=%d Take", gs), pe.Float32s(), f64s(e.Float32s()), 0, 0)

		for _, shape := range [][]int{{k}, {1, 1, k}, {2, 3, k}} {
			size := 1
			for _, d := range shape {
				size *= d
			}
			x := mlx.FromSlice(randSlice(r, size, -1, 1), shape...)
			want, got := mlx.QuantizedMatmul(x, wq, s, b, true, gs, 4), p.Matmul(x)
			shapeEq(t, "PackedQuant.Matmul", got, append(shape[:len(shape)-1:len(shape)-1], n)...)
			closeTo(t, fmt.Sprintf("gs=%d Matmul %v", gs, shape), got.Float32s(), f64s(want.Float32s()), 1e-5, 1e-5)
			xb := mlx.AsType(x, mlx.BFloat16)
			yb := p.Matmul(xb)
			if yb.DType() != mlx.BFloat16 {
				t.Errorf("bf16 x gave %v", yb.DType())
			}
			mlx.Free(x, want, got, xb, yb)
		}
		mlx.Free(w, wq, s, b, deq, pdeq, ids, e, pe, p.Storage())
	}
	for _, f := range [][2]int{{8, 64}, {4, 32}} {
		w := mlx.FromSlice(randSlice(r, 8*128, -1, 1), 8, 128)
		wq, s, b, err := mlx.Quantize(w, f[1], f[0])
		if err != nil {
			t.Fatal(err)
		}
		if p := mlx.PackQuantized(wq, s, b, f[1], f[0]); p != nil {
			t.Errorf("%d bits in groups of %d packed", f[0], f[1])
			p.Storage().Free()
		}
		mlx.Free(w, wq, s, b)
	}
}
