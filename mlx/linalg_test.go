package mlx_test

import (
	"fmt"
	"testing"

	"hark/mlx"
)

// refMatmul: naive float64 batched matmul with broadcasting batch dims.
func refMatmul(a []float32, as []int, b []float32, bs []int, transB bool) ([]float64, []int) {
	m, k := as[len(as)-2], as[len(as)-1]
	n := bs[len(bs)-1]
	if transB {
		n = bs[len(bs)-2]
	}
	batch, _ := mlx.BroadcastShapes(as[:len(as)-2], bs[:len(bs)-2])
	os := append(append([]int(nil), batch...), m, n)
	out := make([]float64, size(os))
	for bi := 0; bi < size(batch); bi++ {
		idx := unravel(bi, batch)
		ao := bcFlat(idx, as[:len(as)-2]) * m * k
		bo := bcFlat(idx, bs[:len(bs)-2]) * k * n
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for l := 0; l < k; l++ {
					bv := b[bo+l*n+j]
					if transB {
						bv = b[bo+j*k+l]
					}
					s += float64(a[ao+i*k+l]) * float64(bv)
				}
				out[bi*m*n+i*n+j] = s
			}
		}
	}
	return out, os
}

func TestMatmul(t *testing.T) {
	leakFree(t)
	r := newRNG(20)
	cases := [][2][]int{
		{{3, 4}, {4, 5}}, {{1, 17}, {17, 33}}, {{2, 3, 4}, {4, 6}}, {{2, 1, 3, 8}, {5, 8, 2}},
		{{4, 9}, {3, 9, 7}}, {{65, 31}, {31, 19}}, {{1, 1}, {1, 1}}, {{2, 0, 3}, {3, 4}},
	}
	for _, c := range cases {
		for _, tb := range []bool{false, true} {
			bs := append([]int(nil), c[1]...)
			if tb {
				bs[len(bs)-1], bs[len(bs)-2] = bs[len(bs)-2], bs[len(bs)-1]
			}
			ad, bd := randSlice(r, size(c[0]), -1, 1), randSlice(r, size(bs), -1, 1)
			a, b := mlx.FromSlice(ad, c[0]...), mlx.FromSlice(bd, bs...)
			var y *mlx.Array
			if tb {
				y = mlx.MatmulT(a, b)
			} else {
				y = mlx.Matmul(a, b)
			}
			want, os := refMatmul(ad, c[0], bd, bs, tb)
			name := fmt.Sprint("Matmul", c, tb)
			shapeEq(t, name, y, os...)
			closeTo(t, name, y.Float32s(), want, 1e-5, 1e-5)
			mlx.Free(a, b, y)
		}
	}
	// vectors
	a := mlx.FromSlice([]float32{1, 2, 3})
	m := mlx.FromSlice(iota32(6), 3, 2)
	v1 := mlx.Matmul(a, m)
	mt := mlx.Transpose(m)
	v2 := mlx.Matmul(mt, a)
	dot := mlx.Matmul(a, a)
	shapeEq(t, "vec@mat", v1, 2)
	shapeEq(t, "mat@vec", v2, 2)
	shapeEq(t, "dot", dot)
	if fmt.Sprint(v1.Float32s(), v2.Float32s(), dot.Item()) != "[16 22] [16 22] 14" {
		t.Fatalf("vector matmul %v %v %v", v1.Float32s(), v2.Float32s(), dot.Item())
	}
	// half precision: computed in f32, rounded once
	ah, mh := mlx.AsType(mt, mlx.Float16), mlx.AsType(m, mlx.Float16)
	hh := mlx.Matmul(ah, mh)
	if hh.DType() != mlx.Float16 || fmt.Sprint(hh.Float32s()) != "[20 26 26 35]" {
		t.Fatalf("f16 matmul %v %v", hh.DType(), hh.Float32s())
	}
	w := mlx.FromSlice([]float32{1, 0, 0, 1, 1, 1}, 3, 2)
	bias := mlx.FromSlice([]float32{10, 20, 30})
	x := mlx.FromSlice([]float32{1, 2}, 1, 2)
	lin := mlx.Linear(x, w, bias)
	if fmt.Sprint(lin.Float32s()) != "[11 22 33]" {
		t.Fatalf("Linear %v", lin.Float32s())
	}
	mlx.Free(a, m, v1, mt, v2, dot, ah, mh, hh, w, bias, x, lin)
}
