package mlx_test

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
)

// Slices are views on the CPU backend; every op must see the right data
// whether it reads them in place or materialises them.
func TestSliceViews(t *testing.T) {
	leakFree(t)
	x := mlx.FromSlice(iota32(4*5*6), 4, 5, 6)
	v := mlx.Slice(x, []int{1, 0, 1}, []int{4, 5, 6}, []int{2, 2, 2}) // [2,3,3]
	vv := mlx.Slice(v, []int{0, 2}, []int{2, 0}, []int{1, -1})        // view of a view, backwards
	r := mlx.Reshape(v, -1)
	e := mlx.Sqrt(vv)
	x.Free() // the views keep the storage alive
	var want []float64
	for _, i := range []int{1, 3} {
		for _, j := range []int{0, 2, 4} {
			for _, k := range []int{1, 3, 5} {
				want = append(want, float64((i*5+j)*6+k))
			}
		}
	}
	closeTo(t, "view", v.Float32s(), want, 0, 0)
	closeTo(t, "reshape of view", r.Float32s(), want, 0, 0)
	var want2, wantE []float64
	for _, i := range []int{0, 1} {
		for _, j := range []int{2, 1} {
			for k := 0; k < 3; k++ {
				want2 = append(want2, want[(i*3+j)*3+k])
				wantE = append(wantE, math.Sqrt(want[(i*3+j)*3+k]))
			}
		}
	}
	closeTo(t, "view of view", vv.Float32s(), want2, 0, 0)
	closeTo(t, "op on view", e.Float32s(), wantE, 1e-6, 0)
	mlx.Free(v, vv, r, e)
}

func TestViewCopyOnWrite(t *testing.T) {
	leakFree(t)
	cache := mlx.Zeros([]int{1, 2, 6, 4}, mlx.Float32)
	prefix := mlx.SliceAxis(cache, 2, 0, 3)
	upd := mlx.Ones([]int{1, 2, 1, 4}, mlx.Float32)
	mlx.SliceAssign(cache, upd, []int{0, 0, 1}, []int{1, 2, 2}, nil)
	s := mlx.Sum(prefix, false)
	s2 := mlx.Sum(cache, false)
	if s.Item() != 0 || s2.Item() != 8 {
		t.Fatalf("a view saw a later SliceAssign (%v) or the write was lost (%v)", s.Item(), s2.Item())
	}
	mlx.Free(cache, prefix, upd, s, s2)
}

// The KV-cache pattern: a preallocated buffer written with SliceAssign and
// read through a prefix view must match attention over a fresh copy.
func TestSDPAOverCacheView(t *testing.T) {
	leakFree(t)
	r := newRNG(80)
	const B, Hq, Hkv, D, Max = 1, 4, 2, 16, 40
	cacheK := mlx.Zeros([]int{B, Hkv, Max, D}, mlx.Float32)
	cacheV := mlx.Zeros([]int{B, Hkv, Max, D}, mlx.Float32)
	defer mlx.Free(cacheK, cacheV)
	off := 0
	for step, l := range []int{7, 1, 1, 3, 1} { // a prefill, decode steps and a short chunk
		k := mlx.FromSlice(randSlice(r, B*Hkv*l*D, -1, 1), B, Hkv, l, D)
		v := mlx.FromSlice(randSlice(r, B*Hkv*l*D, -1, 1), B, Hkv, l, D)
		q := mlx.FromSlice(randSlice(r, B*Hq*l*D, -1, 1), B, Hq, l, D)
		mlx.SliceAssign(cacheK, k, []int{0, 0, off}, []int{B, Hkv, off + l}, nil)
		mlx.SliceAssign(cacheV, v, []int{0, 0, off}, []int{B, Hkv, off + l}, nil)
		off += l
		kv, vv := mlx.SliceAxis(cacheK, 2, 0, off), mlx.SliceAxis(cacheV, 2, 0, off)
		got := mlx.ScaledDotProductAttention(q, kv, vv, 0.25, mlx.CausalMask())
		kc, vc := mlx.Copy(kv), mlx.Copy(vv)
		want := refSDPA(q.Float32s(), kc.Float32s(), vc.Float32s(), B, Hq, Hkv, l, off, D, D, 0.25,
			func(b, h, i, j int) float64 {
				if j > i+off-l {
					return math.Inf(-1)
				}
				return 0
			})
		closeTo(t, fmt.Sprint("cache step ", step), got.Float32s(), want, 1e-5, 2e-6)
		mlx.Free(k, v, q, kv, vv, got, kc, vc)
	}
}

func TestTransposeOfView(t *testing.T) {
	leakFree(t)
	x := mlx.FromSlice(iota32(3*4*5), 3, 4, 5)
	v := mlx.Slice(x, []int{1, 0, 4}, []int{3, 4, 0}, []int{1, 2, -2}) // [2, 2, 2]
	tv := mlx.Transpose(v, 2, 0, 1)                                    // first use of v: read through the view
	c := mlx.Copy(v)
	tc := mlx.Transpose(c, 2, 0, 1)
	closeTo(t, "transpose of view", tv.Float32s(), f64s(tc.Float32s()), 0, 0)
	mlx.Free(x, v, c, tv, tc)
}
