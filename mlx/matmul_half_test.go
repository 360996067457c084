package mlx_test

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"hark/mlx"
)

// TestMatmulHalfWeight multiplies float32 activations by a bf16 or f16
// weight, as a model holding 16-bit weights does (Linear, the tied output
// head): the result is float32 and equals x times the exactly widened
// weight up to float32 rounding of the sums, for decode and prefill batch
// sizes, folded leading axes and a batched weight.
func TestMatmulHalfWeight(t *testing.T) {
	leakFree(t)
	r := newRNG(21)
	cases := [][2][]int{
		{{1, 33}, {33, 17}}, {{3, 5, 40}, {40, 9}}, {{70, 31}, {31, 130}}, {{1, 1, 7}, {1, 7, 3}}, {{2, 4, 9}, {2, 9, 5}},
	}
	for _, dt := range []mlx.DType{mlx.BFloat16, mlx.Float16} {
		for _, c := range cases {
			for _, tb := range []bool{false, true} {
				bs := append([]int(nil), c[1]...)
				if tb {
					bs[len(bs)-1], bs[len(bs)-2] = bs[len(bs)-2], bs[len(bs)-1]
				}
				ad, bd := randSlice(r, size(c[0]), -1, 1), randSlice(r, size(bs), -1, 1)
				a, b32 := mlx.FromSlice(ad, c[0]...), mlx.FromSlice(bd, bs...)
				b := mlx.AsType(b32, dt)
				wide := mlx.AsType(b, mlx.Float32)
				bw := wide.Float32s() // the exactly widened weight
				var y *mlx.Array
				if tb {
					y = mlx.MatmulT(a, b)
				} else {
					y = mlx.Matmul(a, b)
				}
				want, os := refMatmul(ad, c[0], bw, bs, tb)
				name := fmt.Sprint(dt, c, tb)
				shapeEq(t, name, y, os...)
				if y.DType() != mlx.Float32 {
					t.Errorf("%s: dtype %v, want float32", name, y.DType())
				}
				k := c[0][len(c[0])-1]
				got := y.Float32s()
				for i := range want {
					// |x|, |w| <= 1: k terms of magnitude at most 1.
					if d := math.Abs(float64(got[i]) - want[i]); d > float64(k+2)*0x1p-24*float64(k) || math.IsNaN(float64(got[i])) {
						t.Errorf("%s[%d] = %v, want %v", name, i, got[i], want[i])
						break
					}
				}
				mlx.Free(a, b32, b, wide, y)
			}
		}
	}
}

// TestMatmulHalfWeightNotWidened: a decode-step product with a 16-bit
// weight allocates nothing near the size of a widened copy of the weight
// (issue 13: the backend converts inside its kernels).
func TestMatmulHalfWeightNotWidened(t *testing.T) {
	leakFree(t)
	const k, n = 1024, 2048
	r := newRNG(22)
	w32 := mlx.FromSlice(randSlice(r, n*k, -1, 1), n, k)
	x := mlx.FromSlice(randSlice(r, k, -1, 1), 1, 1, k)
	for _, dt := range []mlx.DType{mlx.BFloat16, mlx.Float16} {
		w := mlx.AsType(w32, dt)
		mlx.Free(mlx.MatmulT(x, w)) // warm the pools
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		y := mlx.MatmulT(x, w)
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew >= n*k {
			t.Errorf("%v: x @ wᵀ allocated %d bytes; the widened weight is %d", dt, grew, 4*n*k)
		}
		mlx.Free(y, w)
	}
	mlx.Free(w32, x)
}
