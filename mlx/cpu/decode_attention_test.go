package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"hark/mlx"
)

// TestDecodeAttentionMatchesComposed: the fused op writes the same bits
// into the caches as the composed ops (split, RoPE, SliceAssign) and
// attends within float32 rounding of them, across head groupings, RoPE
// layouts and scalings, batches and positions; and it leaves the earlier
// cache rows alone.
func TestDecodeAttentionMatchesComposed(t *testing.T) {
	defer checkNoLeaks(t, mlx.LiveArrays())
	r := rand.New(rand.NewPCG(81, 82))
	arr := func(shape ...int) *mlx.Array { return mlx.FromSlice(randF32(r, mlx.ShapeSize(shape)), shape...) }
	freqs := mlx.Llama3RoPEFreqs(32, 500000, 8, 1, 4, 8192)
	defer freqs.Free()
	cases := []struct {
		b, h, hkv, d, pos, capacity int
		rope                        mlx.RoPEParams
	}{
		{1, 14, 2, 64, 0, 256, mlx.RoPEParams{Dims: 64, Base: 1000000}},
		{1, 14, 2, 64, 200, 256, mlx.RoPEParams{Dims: 64, Base: 1000000}},
		{2, 8, 8, 32, 37, 64, mlx.RoPEParams{Dims: 32, Base: 10000, Traditional: true}},
		{1, 8, 1, 32, 63, 64, mlx.RoPEParams{Dims: 16, Base: 10000, Scale: 0.25, MScale: 1.2}},
		{2, 4, 2, 32, 9, 16, mlx.RoPEParams{Dims: 32, Freqs: freqs}},
		{1, 6, 3, 48, 300, 512, mlx.RoPEParams{Dims: 48, Base: 10000}},
		// Long enough for the keys to be split across threads (decodeSplit).
		{1, 14, 2, 64, 1500, 1536, mlx.RoPEParams{Dims: 64, Base: 1000000}},
		{1, 8, 1, 128, 4100, 4224, mlx.RoPEParams{Dims: 128, Base: 10000}},
		{2, 4, 2, 32, 2600, 2700, mlx.RoPEParams{Dims: 32, Base: 10000}},
	}
	for _, c := range cases {
		name := fmt.Sprintf("b%d_h%d_kv%d_d%d_pos%d", c.b, c.h, c.hkv, c.d, c.pos)
		p := mlx.DecodeAttentionParams{Heads: c.h, KVHeads: c.hkv, HeadDim: c.d, RoPE: c.rope, Scale: float32(1 / math.Sqrt(float64(c.d)))}
		qkv := arr(c.b, 1, (c.h+2*c.hkv)*c.d)
		k1, v1 := arr(c.b, c.hkv, c.capacity, c.d), arr(c.b, c.hkv, c.capacity, c.d)
		k2, v2 := mlx.Copy(k1), mlx.Copy(v1)
		got := mlx.DecodeAttention(qkv, k1, v1, c.pos, p)
		want := mlx.DecodeAttentionComposed(qkv, k2, v2, c.pos, p)
		if !sameBits(k1, k2) || !sameBits(v1, v2) {
			t.Errorf("%s: caches differ from the composed ops' writes", name)
		}
		gf, wf := got.Float32s(), want.Float32s()
		for i := range wf {
			if d := math.Abs(float64(gf[i] - wf[i])); d > 1e-5*(1+math.Abs(float64(wf[i]))) || math.IsNaN(float64(gf[i])) {
				t.Fatalf("%s: out[%d] = %v, composed %v", name, i, gf[i], wf[i])
			}
		}
		mlx.Free(qkv, k1, v1, k2, v2, got, want)
	}
}

// TestDecodeAttentionNonFinite: a query that makes a score infinite takes
// the per-row path and still matches the composed ops.
func TestDecodeAttentionNonFinite(t *testing.T) {
	defer checkNoLeaks(t, mlx.LiveArrays())
	const h, hkv, d, pos, capacity = 4, 2, 16, 5, 8
	vals := make([]float32, (h+2*hkv)*d)
	for i := range vals {
		vals[i] = float32(i%7) - 3
	}
	vals[3] = float32(math.Inf(1))
	qkv := mlx.FromSlice(vals, 1, 1, (h+2*hkv)*d)
	k1, v1 := mlx.Ones([]int{1, hkv, capacity, d}, mlx.Float32), mlx.Ones([]int{1, hkv, capacity, d}, mlx.Float32)
	k2, v2 := mlx.Copy(k1), mlx.Copy(v1)
	p := mlx.DecodeAttentionParams{Heads: h, KVHeads: hkv, HeadDim: d, RoPE: mlx.RoPEParams{Dims: d, Base: 10000}, Scale: 0.25}
	got, want := mlx.DecodeAttention(qkv, k1, v1, pos, p), mlx.DecodeAttentionComposed(qkv, k2, v2, pos, p)
	if !sameBits(got, want) {
		t.Errorf("got %v, composed %v", got.Float32s()[:d], want.Float32s()[:d])
	}
	mlx.Free(qkv, k1, v1, k2, v2, got, want)
}

func sameBits(a, b *mlx.Array) bool {
	x, y := a.Float32s(), b.Float32s()
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			return false
		}
	}
	return true
}

// TestDecodeSplit: attention with the keys cut into ranges and merged by
// their log-sum-exps agrees with the per-row path within float32
// rounding, for ranges that end inside a block of the kernel or hold a
// short tail, maxima that grow from range to range, batches and grouped
// heads; a score that is not finite in one range sends its kv head (and
// only that one) down the per-row path.
func TestDecodeSplit(t *testing.T) {
	if !attnDecodeLSEOK(64) {
		t.Skip("no kernel that gives the log-sum-exp here")
	}
	r := rand.New(rand.NewPCG(19, 5))
	for _, c := range []struct {
		sh    decodeShape
		parts int
	}{
		{decodeShape{1, 14, 2, 64, 4100, 4096}, 4},
		{decodeShape{1, 14, 2, 64, 1000, 1000}, 3},
		{decodeShape{2, 8, 2, 32, 700, 650}, 5},
		{decodeShape{1, 4, 1, 128, 300, 257}, 2},
		{decodeShape{1, 7, 1, 64, 2000, 1025}, 8},
	} {
		sh := c.sh
		for _, inf := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v_parts%d_inf%v", sh, c.parts, inf), func(t *testing.T) {
				g, heads := sh.h/sh.hkv, sh.b*sh.hkv
				q := randF32(r, sh.b*sh.h*sh.d)
				kd, vd := randF32(r, heads*sh.capacity*sh.d), randF32(r, heads*sh.capacity*sh.d)
				for gi := range heads {
					for j := range sh.n {
						for i := range sh.d {
							kd[(gi*sh.capacity+j)*sh.d+i] *= 20 * float32(j+1) / float32(sh.n)
						}
					}
				}
				if inf {
					// A key in the last range of the last kv head overflows.
					kd[((heads-1)*sh.capacity+sh.n-1)*sh.d] = float32(math.Inf(1))
				}
				scale := float32(1 / math.Sqrt(float64(sh.d)))
				got := make([]float32, sh.b*sh.h*sh.d)
				decodeSplit(q, kd, vd, sh, c.parts, scale, got)
				want, s := make([]float32, g*sh.d), make([]float32, sh.n)
				for gi := range heads {
					r0 := (gi/sh.hkv)*sh.h + (gi%sh.hkv)*g
					k, v := kd[gi*sh.capacity*sh.d:], vd[gi*sh.capacity*sh.d:]
					decodeRows(q[r0*sh.d:], g, k, v, sh.n, sh.d, scale, s, want)
					for i, w := range want {
						x := got[r0*sh.d+i]
						if same := math.Float32bits(x) == math.Float32bits(w); inf && gi == heads-1 && !same {
							t.Fatalf("kv head %d [%d] = %g, per-row path %g", gi, i, x, w)
						}
						if math.IsNaN(float64(w)) {
							continue
						}
						if math.Abs(float64(x-w)) > 2e-5+2e-5*math.Abs(float64(w)) || math.IsNaN(float64(x)) {
							t.Fatalf("kv head %d [%d] = %g, want %g", gi, i, x, w)
						}
					}
				}
			})
		}
	}
}
