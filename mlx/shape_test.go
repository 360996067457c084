package mlx_test

import (
	"fmt"
	"testing"

	"hark/mlx"
)

func iota32(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(i)
	}
	return s
}

func TestReshapeViews(t *testing.T) {
	leakFree(t)
	x := mlx.FromSlice(iota32(24), 2, 3, 4)
	r := mlx.Reshape(x, 4, -1)
	f := mlx.Flatten(x, 1, 2)
	e := mlx.ExpandDims(x, 0, -1)
	s := mlx.Squeeze(e)
	s0 := mlx.Squeeze(e, 0)
	shapeEq(t, "Reshape", r, 4, 6)
	shapeEq(t, "Flatten", f, 2, 12)
	shapeEq(t, "ExpandDims", e, 1, 2, 3, 4, 1)
	shapeEq(t, "Squeeze", s, 2, 3, 4)
	shapeEq(t, "Squeeze0", s0, 2, 3, 4, 1)
	x.Free() // views keep the storage alive
	closeTo(t, "view data", r.Float32s(), f64s(iota32(24)), 0, 0)
	mlx.Free(r, f, e, s, s0)
}

// refTranspose permutes with naive index arithmetic.
func refTranspose(data []float32, shape, perm []int) ([]float64, []int) {
	os := make([]int, len(perm))
	for i, p := range perm {
		os[i] = shape[p]
	}
	out := make([]float64, size(os))
	st := strides(shape)
	for i := range out {
		idx := unravel(i, os)
		src := 0
		for d, p := range perm {
			src += idx[d] * st[p]
		}
		out[i] = float64(data[src])
	}
	return out, os
}

func TestTransposeAndSwap(t *testing.T) {
	leakFree(t)
	cases := []struct{ shape, perm []int }{
		{[]int{3, 5}, []int{1, 0}}, {[]int{2, 3, 4}, []int{2, 0, 1}}, {[]int{2, 3, 4, 5}, []int{0, 2, 1, 3}},
		{[]int{1, 7, 1, 9}, []int{3, 2, 1, 0}}, {[]int{33, 17}, []int{1, 0}}, {[]int{2, 1, 3}, []int{0, 1, 2}},
		{[]int{4, 0, 3}, []int{2, 1, 0}},
	}
	for _, c := range cases {
		n := size(c.shape)
		x := mlx.FromSlice(iota32(n), c.shape...)
		y := mlx.Transpose(x, c.perm...)
		want, os := refTranspose(iota32(n), c.shape, c.perm)
		shapeEq(t, "Transpose", y, os...)
		closeTo(t, fmt.Sprint("Transpose", c.shape, c.perm), y.Float32s(), want, 0, 0)
		mlx.Free(x, y)
	}
	x := mlx.FromSlice(iota32(24), 2, 3, 4)
	s := mlx.SwapAxes(x, -1, 0)
	want, _ := refTranspose(iota32(24), []int{2, 3, 4}, []int{2, 1, 0})
	closeTo(t, "SwapAxes", s.Float32s(), want, 0, 0)
	m := mlx.MoveAxis(x, 0, 2)
	want, _ = refTranspose(iota32(24), []int{2, 3, 4}, []int{1, 2, 0})
	closeTo(t, "MoveAxis", m.Float32s(), want, 0, 0)
	r := mlx.Transpose(x)
	shapeEq(t, "reverse", r, 4, 3, 2)
	// other dtypes take the same path
	h := mlx.AsType(x, mlx.BFloat16)
	ht := mlx.Transpose(h, 1, 0, 2)
	want, _ = refTranspose(iota32(24), []int{2, 3, 4}, []int{1, 0, 2})
	closeTo(t, "bf16 transpose", ht.Float32s(), want, 0, 0)
	mlx.Free(x, s, m, r, h, ht)
}

func TestSlice(t *testing.T) {
	leakFree(t)
	shape := []int{5, 6, 7}
	data := iota32(size(shape))
	cases := []struct{ start, stop, step []int }{
		{[]int{1, 2, 3}, []int{4, 5, 6}, nil},
		{[]int{0, 0, 0}, []int{5, 6, 7}, []int{2, 3, 4}},
		{[]int{-2}, []int{mlx.End}, nil},
		{[]int{4, 5}, []int{-6, 0}, []int{-1, -2}},
		{[]int{0, 1, 2}, []int{5, 1, 7}, nil}, // empty
		{[]int{-100, 2, 0}, []int{100, 4, 7}, []int{1, 1, 3}},
	}
	for _, c := range cases {
		x := mlx.FromSlice(data, shape...)
		y := mlx.Slice(x, c.start, c.stop, c.step)
		// reference via per-axis index lists, Python rules
		var lists [][]int
		for d := 0; d < 3; d++ {
			var l []int
			if d >= len(c.start) {
				for i := 0; i < shape[d]; i++ {
					l = append(l, i)
				}
			} else {
				st := 1
				if c.step != nil {
					st = c.step[d]
				}
				l = pySlice(c.start[d], c.stop[d], st, shape[d])
			}
			lists = append(lists, l)
		}
		var want []float64
		for _, i := range lists[0] {
			for _, j := range lists[1] {
				for _, k := range lists[2] {
					want = append(want, float64(data[(i*6+j)*7+k]))
				}
			}
		}
		shapeEq(t, "Slice", y, len(lists[0]), len(lists[1]), len(lists[2]))
		closeTo(t, fmt.Sprint("Slice", c), y.Float32s(), want, 0, 0)
		mlx.Free(x, y)
	}
}

func pySlice(start, stop, step, n int) []int {
	norm := func(v, lo, hi int) int {
		if v < 0 {
			v += n
		}
		return min(max(v, lo), hi)
	}
	var r []int
	if step > 0 {
		for i := norm(start, 0, n); i < norm(stop, 0, n); i += step {
			r = append(r, i)
		}
	} else {
		for i := norm(start, -1, n-1); i > norm(stop, -1, n-1); i += step {
			r = append(r, i)
		}
	}
	return r
}

func TestSliceUpdateKVCache(t *testing.T) {
	leakFree(t)
	cache := mlx.Zeros([]int{1, 2, 6, 3}, mlx.Float32)
	upd := mlx.FromSlice(iota32(2*2*3), 1, 2, 2, 3)
	nc := mlx.SliceUpdate(cache, upd, []int{0, 0, 3}, []int{1, 2, 5}, nil)
	got := nc.Float32s()
	for i, v := range got {
		idx := unravel(i, []int{1, 2, 6, 3})
		want := float32(0)
		if idx[2] >= 3 && idx[2] < 5 {
			want = float32((idx[1]*2+idx[2]-3)*3 + idx[3])
		}
		if v != want {
			t.Fatalf("SliceUpdate[%v] = %v want %v", idx, v, want)
		}
	}
	if s := mlx.Sum(cache, false); s.Item() != 0 {
		t.Fatal("SliceUpdate modified its input")
	} else {
		s.Free()
	}
	// strided update with a broadcast scalar
	x := mlx.FromSlice(iota32(10), 10)
	one := mlx.Scalar(-1, mlx.Float32)
	y := mlx.SliceUpdate(x, one, []int{1}, []int{10}, []int{3})
	if fmt.Sprint(y.Float32s()) != "[0 -1 2 3 -1 5 6 -1 8 9]" {
		t.Fatalf("strided SliceUpdate %v", y.Float32s())
	}
	mlx.Free(cache, upd, nc, x, one, y)
}

func TestConcatStackSplit(t *testing.T) {
	leakFree(t)
	a := mlx.FromSlice(iota32(6), 2, 3)
	b := mlx.FromSlice([]int32{10, 11, 12, 13}, 2, 2)
	c := mlx.Concatenate([]*mlx.Array{a, b}, 1)
	shapeEq(t, "Concat", c, 2, 5)
	if c.DType() != mlx.Float32 || fmt.Sprint(c.Float32s()) != "[0 1 2 10 11 3 4 5 12 13]" {
		t.Fatalf("Concat %v %v", c.DType(), c.Float32s())
	}
	c0 := mlx.Concatenate([]*mlx.Array{a, a}, 0)
	closeTo(t, "Concat0", c0.Float32s(), f64s(append(iota32(6), iota32(6)...)), 0, 0)
	s := mlx.Stack([]*mlx.Array{a, a}, 1)
	shapeEq(t, "Stack", s, 2, 2, 3)
	if fmt.Sprint(s.Float32s()) != "[0 1 2 0 1 2 3 4 5 3 4 5]" {
		t.Fatalf("Stack %v", s.Float32s())
	}
	parts := mlx.Split(c, []int{1, 4}, 1)
	if len(parts) != 3 || fmt.Sprint(parts[1].Float32s()) != "[1 2 10 4 5 12]" {
		t.Fatalf("Split %v", parts[1].Float32s())
	}
	eq := mlx.SplitEqual(c0, 2, 0)
	closeTo(t, "SplitEqual", eq[1].Float32s(), f64s(iota32(6)), 0, 0)
	mlx.Free(a, b, c, c0, s)
	mlx.Free(parts...)
	mlx.Free(eq...)
}

func TestPadBroadcastTake(t *testing.T) {
	leakFree(t)
	x := mlx.FromSlice(iota32(6), 2, 3)
	p := mlx.Pad(x, []int{1, 0}, []int{0, 2}, -1)
	shapeEq(t, "Pad", p, 3, 5)
	if fmt.Sprint(p.Float32s()) != "[-1 -1 -1 -1 -1 0 1 2 -1 -1 3 4 5 -1 -1]" {
		t.Fatalf("Pad %v", p.Float32s())
	}
	b := mlx.BroadcastTo(x, 2, 2, 3)
	closeTo(t, "BroadcastTo", b.Float32s(), f64s(append(iota32(6), iota32(6)...)), 0, 0)
	col := mlx.FromSlice([]float32{1, 2}, 2, 1)
	bc := mlx.BroadcastTo(col, 2, 4)
	if fmt.Sprint(bc.Float32s()) != "[1 1 1 1 2 2 2 2]" {
		t.Fatalf("BroadcastTo col %v", bc.Float32s())
	}
	// embedding lookup: rows of a [V, D] table, indices of any shape
	emb := mlx.FromSlice(iota32(5*3), 5, 3)
	ids := mlx.FromSlice([]int32{4, 0, -1, 2}, 2, 2)
	tk := mlx.Take(emb, ids, 0)
	shapeEq(t, "Take", tk, 2, 2, 3)
	if fmt.Sprint(tk.Float32s()) != "[12 13 14 0 1 2 12 13 14 6 7 8]" {
		t.Fatalf("Take %v", tk.Float32s())
	}
	cols := mlx.FromSlice([]uint32{2, 0}, 2)
	tc := mlx.Take(emb, cols, 1)
	shapeEq(t, "Take axis1", tc, 5, 2)
	if fmt.Sprint(tc.Float32s()) != "[2 0 5 3 8 6 11 9 14 12]" {
		t.Fatalf("Take axis 1 %v", tc.Float32s())
	}
	idx := mlx.FromSlice([]int32{2, 0, 1, 1}, 2, 2)
	ta := mlx.TakeAlongAxis(x, idx, 1)
	if fmt.Sprint(ta.Float32s()) != "[2 0 4 4]" {
		t.Fatalf("TakeAlongAxis %v", ta.Float32s())
	}
	idx0 := mlx.FromSlice([]int32{1, 0, 1}, 1, 3)
	ta0 := mlx.TakeAlongAxis(x, idx0, 0)
	if fmt.Sprint(ta0.Float32s()) != "[3 1 5]" {
		t.Fatalf("TakeAlongAxis axis0 %v", ta0.Float32s())
	}
	mlx.Free(x, p, b, col, bc, emb, ids, tk, cols, tc, idx, ta, idx0, ta0)
}

func TestCreation(t *testing.T) {
	leakFree(t)
	a := mlx.Arange(0, 5, 1, mlx.Int32)
	b := mlx.Arange(1, 0, -0.25, mlx.Float32)
	f := mlx.Full([]int{2, 2}, 7, mlx.BFloat16)
	z := mlx.ZerosLike(f)
	defer mlx.Free(a, b, f, z)
	if fmt.Sprint(a.Ints(), b.Float32s(), f.Float32s(), z.DType()) != "[0 1 2 3 4] [1 0.75 0.5 0.25] [7 7 7 7] bfloat16" {
		t.Fatalf("creation: %v %v %v %v", a.Ints(), b.Float32s(), f.Float32s(), z.DType())
	}
	raw := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0} // 1.0, -2.0 little-endian
	r, err := mlx.FromBytes(raw, mlx.Float32, 2)
	if err != nil || fmt.Sprint(r.Float32s()) != "[1 -2]" {
		t.Fatalf("FromBytes %v %v", err, r)
	}
	r.Free()
	if _, err := mlx.FromBytes(raw, mlx.Float32, 3); err == nil {
		t.Fatal("FromBytes accepted a short buffer")
	}
	tr := mlx.Tri(3, 4, 0, mlx.Float32)
	tu := mlx.Triu(tr, 1)
	defer mlx.Free(tr, tu)
	if fmt.Sprint(tr.Float32s()) != "[1 0 0 0 1 1 0 0 1 1 1 0]" || mlx.LiveArrays() == 0 {
		t.Fatalf("Tri %v", tr.Float32s())
	}
	if s := fmt.Sprint(tu.Float32s()); s != "[0 0 0 0 0 0 0 0 0 0 0 0]" {
		t.Fatalf("Triu %v", s)
	}
}

func TestSliceAssign(t *testing.T) {
	leakFree(t)
	cache := mlx.Zeros([]int{1, 2, 4, 2}, mlx.Float32)
	view := mlx.Reshape(cache, 16)
	step := mlx.FromSlice([]float32{1, 2, 3, 4}, 1, 2, 1, 2)
	mlx.SliceAssign(cache, step, []int{0, 0, 1}, []int{1, 2, 2}, nil)
	if fmt.Sprint(cache.Float32s()) != "[0 0 1 2 0 0 0 0 0 0 3 4 0 0 0 0]" {
		t.Fatalf("SliceAssign %v", cache.Float32s())
	}
	if s := mlx.Sum(view, false); s.Item() != 0 {
		t.Fatal("SliceAssign changed a view made before it")
	} else {
		s.Free()
	}
	view.Free()
	mlx.SliceAssign(cache, step, []int{0, 0, 3}, []int{1, 2, 4}, nil) // now unshared: in place
	if fmt.Sprint(cache.Float32s()) != "[0 0 1 2 0 0 1 2 0 0 3 4 0 0 3 4]" {
		t.Fatalf("SliceAssign in place %v", cache.Float32s())
	}
	mlx.Free(cache, step)
}

// SliceUpdate and SliceAssign write exactly the sliced elements, checked
// against an element-by-element reference on random shapes of one to five
// axes, random windows and steps of 1 or 2 (step-1 slices take the run
// copy, the others the strided path).
func TestSliceWriteMatchesReference(t *testing.T) {
	leakFree(t)
	r := newRNG(77)
	for trial := 0; trial < 300; trial++ {
		nd := 1 + r.IntN(5)
		shape, start, stop, step, ush := make([]int, nd), make([]int, nd), make([]int, nd), make([]int, nd), make([]int, nd)
		for i := range shape {
			shape[i] = 1 + r.IntN(5)
			step[i] = 1
			if trial%3 == 0 && r.IntN(2) == 0 {
				step[i] = 2
			}
			start[i] = r.IntN(shape[i])
			stop[i] = start[i] + 1 + r.IntN(shape[i]-start[i])
			ush[i] = (stop[i] - start[i] + step[i] - 1) / step[i]
		}
		dd := randSlice(r, size(shape), -1, 1)
		ud := randSlice(r, size(ush), 2, 3)
		want := append([]float32(nil), dd...)
		for j := range ud {
			idx, at := unravel(j, ush), 0
			for i, v := range idx {
				at = at*shape[i] + start[i] + v*step[i]
			}
			want[at] = ud[j]
		}
		dst, upd := mlx.FromSlice(dd, shape...), mlx.FromSlice(ud, ush...)
		got := mlx.SliceUpdate(dst, upd, start, stop, step)
		if fmt.Sprint(got.Float32s()) != fmt.Sprint(want) {
			t.Fatalf("shape %v start %v stop %v step %v: SliceUpdate gives %v, want %v", shape, start, stop, step, got.Float32s(), want)
		}
		mlx.SliceAssign(dst, upd, start, stop, step)
		if fmt.Sprint(dst.Float32s()) != fmt.Sprint(want) {
			t.Fatalf("shape %v start %v stop %v step %v: SliceAssign gives %v, want %v", shape, start, stop, step, dst.Float32s(), want)
		}
		mlx.Free(dst, upd, got)
	}
}
