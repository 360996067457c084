package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"hark/mlx"
)

// refDecode64 is decode attention for g query heads over n keys and values
// (rows of d) in float64: the reference the f16 kernel is held to.
func refDecode64(q []float32, g int, k, v []float32, n, d int, scale float32, o []float64) {
	s := make([]float64, n)
	for r := range g {
		mx := math.Inf(-1)
		for j := range n {
			var dot float64
			for i := range d {
				dot += float64(q[r*d+i]) * float64(k[j*d+i])
			}
			s[j] = dot * float64(scale)
			mx = math.Max(mx, s[j])
		}
		var sum float64
		for j := range n {
			s[j] = math.Exp(s[j] - mx)
			sum += s[j]
		}
		for i := range d {
			var acc float64
			for j := range n {
				acc += s[j] * float64(v[j*d+i])
			}
			o[r*d+i] = acc / sum
		}
	}
}

// halfOf rounds x to f16, returning the bits and their exact widening.
func halfOf(x []float32) ([]uint16, []float32) {
	h, w := make([]uint16, len(x)), make([]float32, len(x))
	for i, f := range x {
		h[i] = mlx.F32ToF16(f)
		w[i] = mlx.F16ToF32(h[i])
	}
	return h, w
}

// TestDecodeHalfMatchesFloat64: attention over an f16 cache, in the
// AVX-512 kernel that widens each block in registers (split into ranges
// merged by log-sum-exp, or one range) and in the portable path that
// widens a head into float32 scratch (parts 0), agrees with float64
// attention over the widened keys and values: head sizes 64 and 128 (and
// 32), tails shorter than a 16-key group and than a 128-key block, range
// edges inside a block, batches of grouped heads, scores that grow along
// the keys; and a non-finite key sends its head down the per-row path.
func TestDecodeHalfMatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 61))
	for _, c := range []struct {
		sh    decodeShape
		parts int
	}{
		{decodeShape{1, 14, 2, 64, 4100, 4096}, 4},
		{decodeShape{1, 14, 2, 64, 4100, 4096}, 1},
		{decodeShape{1, 14, 2, 64, 300, 1}, 1},
		{decodeShape{1, 14, 2, 64, 300, 15}, 1},
		{decodeShape{1, 14, 2, 64, 300, 129}, 2},
		{decodeShape{2, 8, 2, 128, 700, 650}, 5},
		{decodeShape{1, 4, 1, 128, 300, 257}, 3},
		{decodeShape{1, 7, 1, 64, 2000, 1025}, 8},
		{decodeShape{2, 4, 2, 32, 100, 77}, 2},
	} {
		sh := c.sh
		for _, parts := range []int{c.parts, 0} {
			for _, inf := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v_parts%d_inf%v", sh, parts, inf), func(t *testing.T) {
					if parts > 0 && !attnDecodeLSEOK(sh.d) {
						t.Skip("no f16 kernel here")
					}
					g, heads := sh.h/sh.hkv, sh.b*sh.hkv
					q := randF32(r, sh.b*sh.h*sh.d)
					kraw, vraw := randF32(r, heads*sh.capacity*sh.d), randF32(r, heads*sh.capacity*sh.d)
					for gi := range heads {
						for j := range sh.n {
							for i := range sh.d {
								kraw[(gi*sh.capacity+j)*sh.d+i] *= 8 * float32(j+1) / float32(sh.n)
							}
						}
					}
					if inf {
						// +Inf scores for every query head of the last kv head.
						kraw[((heads-1)*sh.capacity+sh.n-1)*sh.d] = float32(math.Inf(1))
						r0 := ((heads-1)/sh.hkv)*sh.h + ((heads-1)%sh.hkv)*g
						for h := r0; h < r0+g; h++ {
							q[h*sh.d] = float32(math.Abs(float64(q[h*sh.d]))) + 0.1
						}
					}
					kh, kf := halfOf(kraw)
					vh, vf := halfOf(vraw)
					scale := float32(1 / math.Sqrt(float64(sh.d)))
					got := make([]float32, sh.b*sh.h*sh.d)
					decodeSplitHalf(q, kh, vh, sh, parts, scale, got)
					want, s := make([]float64, g*sh.d), make([]float32, g*sh.n)
					rows := make([]float32, g*sh.d)
					for gi := range heads {
						r0 := (gi/sh.hkv)*sh.h + (gi%sh.hkv)*g
						k, v := kf[gi*sh.capacity*sh.d:], vf[gi*sh.capacity*sh.d:]
						if inf && gi == heads-1 {
							// The per-row path over the widened rows, bit for bit.
							decodeRows(q[r0*sh.d:], g, k, v, sh.n, sh.d, scale, s, rows)
							for i, w := range rows {
								if x := got[r0*sh.d+i]; math.Float32bits(x) != math.Float32bits(w) {
									t.Fatalf("kv head %d [%d] = %g, per-row path %g", gi, i, x, w)
								}
							}
							continue
						}
						refDecode64(q[r0*sh.d:], g, k, v, sh.n, sh.d, scale, want)
						for i, w := range want {
							if x := float64(got[r0*sh.d+i]); math.Abs(x-w) > 2e-5+2e-5*math.Abs(w) || math.IsNaN(x) {
								t.Fatalf("kv head %d [%d] = %g, float64 %g", gi, i, x, w)
							}
						}
					}
				})
			}
		}
	}
}

// TestDecodeAttentionHalfCache: the fused op over f16 caches writes the
// new key and value rounded as a cast would (the composed ops' SliceAssign)
// and attends within float32 rounding of the composed ops, which widen the
// cache; earlier rows stay as they were.
func TestDecodeAttentionHalfCache(t *testing.T) {
	defer checkNoLeaks(t, mlx.LiveArrays())
	r := rand.New(rand.NewPCG(7, 16))
	for _, c := range []struct{ b, h, hkv, d, pos, capacity int }{
		{1, 14, 2, 64, 0, 256},
		{1, 14, 2, 64, 3000, 3072},
		{2, 8, 2, 128, 700, 768},
		{1, 6, 3, 48, 130, 256},
	} {
		name := fmt.Sprintf("b%d_h%d_kv%d_d%d_pos%d", c.b, c.h, c.hkv, c.d, c.pos)
		p := mlx.DecodeAttentionParams{Heads: c.h, KVHeads: c.hkv, HeadDim: c.d, RoPE: mlx.RoPEParams{Dims: c.d, Base: 10000}, Scale: float32(1 / math.Sqrt(float64(c.d)))}
		qkv := mlx.FromSlice(randF32(r, c.b*(c.h+2*c.hkv)*c.d), c.b, 1, (c.h+2*c.hkv)*c.d)
		mk := func() *mlx.Array {
			f := mlx.FromSlice(randF32(r, c.b*c.hkv*c.capacity*c.d), c.b, c.hkv, c.capacity, c.d)
			h := mlx.AsType(f, mlx.Float16)
			f.Free()
			return h
		}
		k1, v1 := mk(), mk()
		k2, v2 := mlx.Copy(k1), mlx.Copy(v1)
		got := mlx.DecodeAttention(qkv, k1, v1, c.pos, p)
		want := mlx.DecodeAttentionComposed(qkv, k2, v2, c.pos, p)
		if k1.DType() != mlx.Float16 || !sameBits(k1, k2) || !sameBits(v1, v2) {
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
