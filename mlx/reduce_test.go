package mlx_test

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"hark/mlx"
)

// refReduce reduces data of shape over axes with f.
func refReduce(data []float64, shape, axes []int, init float64, f func(acc, v float64) float64) ([]float64, []int) {
	oshape := append([]int(nil), shape...)
	for _, a := range axes {
		oshape[a] = 1
	}
	out := make([]float64, size(oshape))
	for i := range out {
		out[i] = init
	}
	for i, v := range data {
		idx := unravel(i, shape)
		for _, a := range axes {
			idx[a] = 0
		}
		o := 0
		for d, st := range strides(oshape) {
			o += idx[d] * st
		}
		out[o] = f(out[o], v)
	}
	return out, oshape
}

func TestReductions(t *testing.T) {
	leakFree(t)
	r := newRNG(50)
	shape := []int{3, 4, 5}
	for _, axes := range [][]int{{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}, {-1}} {
		xd := randSlice(r, size(shape), -2, 2)
		x := mlx.FromSlice(xd, shape...)
		norm := make([]int, len(axes))
		for i, a := range axes {
			norm[i] = (a + 3) % 3
		}
		type red struct {
			name string
			f    func(*mlx.Array, bool, ...int) *mlx.Array
			init float64
			acc  func(a, v float64) float64
		}
		for _, rd := range []red{
			{"Sum", mlx.Sum, 0, func(a, v float64) float64 { return a + v }},
			{"Max", mlx.Max, math.Inf(-1), math.Max},
			{"Min", mlx.Min, math.Inf(1), math.Min},
			{"Prod", mlx.Prod, 1, func(a, v float64) float64 { return a * v }},
		} {
			y := rd.f(x, true, axes...)
			want, os := refReduce(f64s(xd), shape, norm, rd.init, rd.acc)
			shapeEq(t, rd.name, y, os...)
			closeTo(t, fmt.Sprint(rd.name, axes), y.Float32s(), want, 1e-6, 1e-6)
			y2 := rd.f(x, false, axes...)
			if y2.Ndim() != 3-len(axes) {
				t.Fatalf("%s keepdims=false ndim %d", rd.name, y2.Ndim())
			}
			mlx.Free(y, y2)
		}
		m := mlx.Mean(x, true, axes...)
		sum, _ := refReduce(f64s(xd), shape, norm, 0, func(a, v float64) float64 { return a + v })
		cnt := 1
		for _, a := range norm {
			cnt *= shape[a]
		}
		means := make([]float64, len(sum))
		for i := range sum {
			means[i] = sum[i] / float64(cnt)
		}
		closeTo(t, fmt.Sprint("Mean", axes), m.Float32s(), means, 1e-6, 1e-6)
		vr := mlx.Var(x, true, 0, axes...)
		sq, _ := refReduce(f64s(xd), shape, norm, 0, func(a, v float64) float64 { return a + v*v })
		vars := make([]float64, len(sq))
		for i := range sq {
			vars[i] = sq[i]/float64(cnt) - means[i]*means[i]
		}
		closeTo(t, fmt.Sprint("Var", axes), vr.Float32s(), vars, 1e-5, 1e-6)
		mlx.Free(x, m, vr)
	}
	// dtype rules
	b := mlx.FromSlice([]bool{true, true, false, true}, 2, 2)
	bs, ba, bo := mlx.Sum(b, false), mlx.All(b, false, 1), mlx.Any(b, false, 1)
	h := mlx.Full([]int{3000}, 0.1, mlx.Float16)
	hs := mlx.Sum(h, false)
	i := mlx.FromSlice([]int32{1, 2, 3, 4}, 2, 2)
	im := mlx.Mean(i, false)
	defer mlx.Free(b, bs, ba, bo, h, hs, i, im)
	if bs.DType() != mlx.Int32 || bs.Item() != 3 || fmt.Sprint(ba.Bools(), bo.Bools()) != "[true false] [true true]" {
		t.Fatalf("bool reductions %v %v %v %v", bs.DType(), bs.Item(), ba.Bools(), bo.Bools())
	}
	// f16 sum accumulates in f32: 3000*0.0999755859375 = 299.93, not stuck at f16 2048
	if hs.DType() != mlx.Float16 || math.Abs(hs.Item()-299.9) > 0.2 {
		t.Fatalf("f16 sum %v %v", hs.DType(), hs.Item())
	}
	if im.DType() != mlx.Float32 || im.Item() != 2.5 {
		t.Fatalf("int mean %v %v", im.DType(), im.Item())
	}
}

func TestArgReduceCumsumSortTopK(t *testing.T) {
	leakFree(t)
	x := mlx.FromSlice([]float32{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 9}, 3, 4)
	am, an := mlx.ArgMax(x, 1, false), mlx.ArgMin(x, 0, true)
	if am.DType() != mlx.Uint32 || fmt.Sprint(am.Uint32s()) != "[2 1 3]" {
		t.Fatalf("ArgMax %v", am.Uint32s())
	}
	shapeEq(t, "ArgMin keep", an, 1, 4)
	if fmt.Sprint(an.Uint32s()) != "[0 0 1 0]" {
		t.Fatalf("ArgMin %v", an.Uint32s())
	}
	cs := mlx.Cumsum(x, 1, false, true)
	cr := mlx.Cumsum(x, 0, true, false)
	if fmt.Sprint(cs.Float32s()) != "[3 4 8 9 5 14 16 22 5 8 13 22]" {
		t.Fatalf("Cumsum %v", cs.Float32s())
	}
	if fmt.Sprint(cr.Float32s()) != "[10 12 7 15 5 3 5 9 0 0 0 0]" {
		t.Fatalf("Cumsum reverse exclusive %v", cr.Float32s())
	}
	s, as := mlx.Sort(x, 1), mlx.ArgSort(x, 1)
	s0 := mlx.Sort(x, 0)
	if fmt.Sprint(s.Float32s()) != "[1 1 3 4 2 5 6 9 3 5 5 9]" || fmt.Sprint(as.Uint32s()) != "[1 3 0 2 2 0 3 1 1 0 2 3]" {
		t.Fatalf("Sort %v ArgSort %v", s.Float32s(), as.Uint32s())
	}
	if fmt.Sprint(s0.Float32s()) != "[3 1 2 1 5 3 4 6 5 9 5 9]" {
		t.Fatalf("Sort axis0 %v", s0.Float32s())
	}
	tk, atk := mlx.TopK(x, 2, 1), mlx.ArgTopK(x, 2, -1)
	if fmt.Sprint(tk.Float32s()) != "[4 3 9 6 9 5]" || fmt.Sprint(atk.Uint32s()) != "[2 0 1 3 3 0]" {
		t.Fatalf("TopK %v ArgTopK %v", tk.Float32s(), atk.Uint32s())
	}
	mlx.Free(x, am, an, cs, cr, s, as, s0, tk, atk)

	// ties: ArgMax/ArgMin/ArgTopK pick the lowest index, ArgSort is stable
	ties := mlx.FromSlice([]float32{1, 7, 7, 0, 0, 7}, 6)
	tm, tn, tt, ts := mlx.ArgMax(ties, 0, false), mlx.ArgMin(ties, 0, false), mlx.ArgTopK(ties, 3, 0), mlx.ArgSort(ties, 0)
	if fmt.Sprint(tm.Uint32s(), tn.Uint32s(), tt.Uint32s(), ts.Uint32s()) != "[1] [3] [1 2 5] [3 4 0 1 2 5]" {
		t.Fatalf("ties: %v %v %v %v", tm.Uint32s(), tn.Uint32s(), tt.Uint32s(), ts.Uint32s())
	}
	mlx.Free(ties, tm, tn, tt, ts)

	// random rows against sort.Float64s; odd lengths; NaN sorts last
	r := newRNG(51)
	for _, n := range []int{1, 2, 17, 100, 1001} {
		xd := randSlice(r, 3*n, -10, 10)
		xa := mlx.FromSlice(xd, 3, n)
		k := min(n, 7)
		st, tkk := mlx.Sort(xa, -1), mlx.TopK(xa, k, -1)
		sg, tg := st.Float32s(), tkk.Float32s()
		for row := 0; row < 3; row++ {
			ref := f64s(xd[row*n : (row+1)*n])
			sort.Float64s(ref)
			closeTo(t, "Sort rows", sg[row*n:(row+1)*n], ref, 0, 0)
			desc := slices.Clone(ref)
			slices.Reverse(desc)
			closeTo(t, "TopK rows", tg[row*k:(row+1)*k], desc[:k], 0, 0)
		}
		mlx.Free(xa, st, tkk)
	}
	nan := mlx.FromSlice([]float32{2, float32(math.NaN()), 1})
	sn := mlx.Sort(nan, 0)
	defer mlx.Free(nan, sn)
	if fmt.Sprint(sn.Float32s()) != "[1 2 NaN]" {
		t.Fatalf("NaN sort %v", sn.Float32s())
	}
}

// Long rows take the radix path: check it against a stable comparison sort
// with duplicates, signed zeros, infinities and NaN.
func TestArgSortLongRows(t *testing.T) {
	leakFree(t)
	r := newRNG(52)
	n := 3000
	xd := make([]float32, n)
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -1e-40}
	for i := range xd {
		if r.IntN(4) == 0 {
			xd[i] = specials[r.IntN(len(specials))]
		} else {
			xd[i] = float32(r.IntN(50)-25) * 0.5 // many duplicates
		}
	}
	for _, dt := range []mlx.DType{mlx.Float32, mlx.BFloat16} {
		x0 := mlx.FromSlice(xd, 1, n)
		x := mlx.AsType(x0, dt)
		vals := x.Float32s()
		got := mlx.ArgSort(x, -1)
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		less := func(a, b float32) bool { // NaN last; -0 == +0
			if a != a {
				return false
			}
			return b != b || a < b
		}
		sort.SliceStable(want, func(a, b int) bool { return less(vals[want[a]], vals[want[b]]) })
		g := got.Uint32s()
		for i := range want {
			if int(g[i]) != want[i] {
				t.Fatalf("%v ArgSort[%d] = %d (%v), want %d (%v)", dt, i, g[i], vals[g[i]], want[i], vals[want[i]])
			}
		}
		mlx.Free(x0, x, got)
	}
}
