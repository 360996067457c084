package mlx_test

import (
	"fmt"
	"testing"

	"hark/mlx"
)

// TestQuantMatrix: a quantized matrix gives what the MLX arrays it came
// from give, before and after its backend packs it: bit-identical rows
// (Take, Dequantize) and matmuls within the quantized kernels' tolerance,
// for batch shapes and a bf16 x. Whether a backend packs a format is its
// own business (tested with the backend); what it computes is not.
func TestQuantMatrix(t *testing.T) {
	leakFree(t)
	r := newRNG(74)
	for _, f := range [][2]int{{4, 64}, {4, 128}, {8, 64}, {4, 32}} {
		bits, gs := f[0], f[1]
		const n, k = 37, 384
		w := mlx.FromSlice(randSlice(r, n*k, -1, 1), n, k)
		wq, s, b, err := mlx.Quantize(w, gs, bits)
		if err != nil {
			t.Fatal(err)
		}
		q := mlx.NewQuantMatrix(mlx.Copy(wq), mlx.Copy(s), mlx.Copy(b), gs, bits)
		for _, packed := range []bool{false, true} {
			if packed {
				mlx.Free(q.Pack()...)
				if !q.Packed() {
					continue // this backend keeps MLX's layout for the format
				}
			}
			name := fmt.Sprintf("%d-bit g%d %v", bits, gs, q)
			if rows, cols := q.Dims(); rows != n || cols != k || q.GroupSize() != gs || q.Bits() != bits {
				t.Fatalf("%s: dims [%d, %d] %d/%d", name, rows, cols, q.GroupSize(), q.Bits())
			}
			deq, pdeq := mlx.Dequantize(wq, s, b, gs, bits), q.Dequantize()
			closeTo(t, name+" Dequantize", pdeq.Float32s(), f64s(deq.Float32s()), 0, 0)

			ids := mlx.FromSlice([]int32{3, 0, int32(n - 1), -1}, 2, 2)
			e, pe := mlx.TakeQuantized(wq, s, b, ids, gs, bits), q.Take(ids)
			shapeEq(t, "QuantMatrix.Take", pe, 2, 2, k)
			closeTo(t, name+" Take", pe.Float32s(), f64s(e.Float32s()), 0, 0)

			for _, shape := range [][]int{{k}, {1, 1, k}, {2, 3, k}} {
				size := 1
				for _, d := range shape {
					size *= d
				}
				x := mlx.FromSlice(randSlice(r, size, -1, 1), shape...)
				want, got := mlx.QuantizedMatmul(x, wq, s, b, true, gs, bits), q.MatmulT(x)
				shapeEq(t, "QuantMatrix.MatmulT", got, append(shape[:len(shape)-1:len(shape)-1], n)...)
				closeTo(t, fmt.Sprintf("%s MatmulT %v", name, shape), got.Float32s(), f64s(want.Float32s()), 1e-5, 1e-5)
				xb := mlx.AsType(x, mlx.BFloat16)
				yb := q.MatmulT(xb)
				if yb.DType() != mlx.BFloat16 {
					t.Errorf("%s: bf16 x gave %v", name, yb.DType())
				}
				mlx.Free(x, want, got, xb, yb)
			}
			mlx.Free(deq, pdeq, ids, e, pe)
		}
		mlx.Free(w, wq, s, b)
		mlx.Free(q.Arrays()...)
	}
}
