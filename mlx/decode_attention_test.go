package mlx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDecodeAttentionMatchesComposed: the fused op writes the same bits
// into the caches as the composed ops (split, RoPE, SliceAssign) and
// attends within float32 rounding of them, across head groupings, RoPE
// layouts and scalings, batches and positions; and it leaves the earlier
// cache rows alone.
func TestDecodeAttentionMatchesComposed(t *testing.T) {
	defer checkNoLeaks(t, LiveArrays())
	r := rand.New(rand.NewPCG(81, 82))
	arr := func(shape ...int) *Array { return FromSlice(randF32(r, shapeSize(shape)), shape...) }
	freqs := Llama3RoPEFreqs(32, 500000, 8, 1, 4, 8192)
	defer freqs.Free()
	cases := []struct {
		b, h, hkv, d, pos, capacity int
		rope                        RoPEParams
	}{
		{1, 14, 2, 64, 0, 256, RoPEParams{Dims: 64, Base: 1000000}},
		{1, 14, 2, 64, 200, 256, RoPEParams{Dims: 64, Base: 1000000}},
		{2, 8, 8, 32, 37, 64, RoPEParams{Dims: 32, Base: 10000, Traditional: true}},
		{1, 8, 1, 32, 63, 64, RoPEParams{Dims: 16, Base: 10000, Scale: 0.25, MScale: 1.2}},
		{2, 4, 2, 32, 9, 16, RoPEParams{Dims: 32, Freqs: freqs}},
		{1, 6, 3, 48, 300, 512, RoPEParams{Dims: 48, Base: 10000}},
	}
	for _, c := range cases {
		name := fmt.Sprintf("b%d_h%d_kv%d_d%d_pos%d", c.b, c.h, c.hkv, c.d, c.pos)
		p := DecodeAttentionParams{Heads: c.h, KVHeads: c.hkv, HeadDim: c.d, RoPE: c.rope, Scale: float32(1 / math.Sqrt(float64(c.d)))}
		qkv := arr(c.b, 1, (c.h+2*c.hkv)*c.d)
		k1, v1 := arr(c.b, c.hkv, c.capacity, c.d), arr(c.b, c.hkv, c.capacity, c.d)
		k2, v2 := Copy(k1), Copy(v1)
		got := DecodeAttention(qkv, k1, v1, c.pos, p)
		want := decodeAttentionComposed(qkv, k2, v2, c.pos, p)
		if !sameBits(k1, k2) || !sameBits(v1, v2) {
			t.Errorf("%s: caches differ from the composed ops' writes", name)
		}
		gf, wf := got.Float32s(), want.Float32s()
		for i := range wf {
			if d := math.Abs(float64(gf[i] - wf[i])); d > 1e-5*(1+math.Abs(float64(wf[i]))) || math.IsNaN(float64(gf[i])) {
				t.Fatalf("%s: out[%d] = %v, composed %v", name, i, gf[i], wf[i])
			}
		}
		Free(qkv, k1, v1, k2, v2, got, want)
	}
}

// TestDecodeAttentionNonFinite: a query that makes a score infinite takes
// the per-row path and still matches the composed ops.
func TestDecodeAttentionNonFinite(t *testing.T) {
	defer checkNoLeaks(t, LiveArrays())
	const h, hkv, d, pos, capacity = 4, 2, 16, 5, 8
	vals := make([]float32, (h+2*hkv)*d)
	for i := range vals {
		vals[i] = float32(i%7) - 3
	}
	vals[3] = float32(math.Inf(1))
	qkv := FromSlice(vals, 1, 1, (h+2*hkv)*d)
	k1, v1 := Ones([]int{1, hkv, capacity, d}, Float32), Ones([]int{1, hkv, capacity, d}, Float32)
	k2, v2 := Copy(k1), Copy(v1)
	p := DecodeAttentionParams{Heads: h, KVHeads: hkv, HeadDim: d, RoPE: RoPEParams{Dims: d, Base: 10000}, Scale: 0.25}
	got, want := DecodeAttention(qkv, k1, v1, pos, p), decodeAttentionComposed(qkv, k2, v2, pos, p)
	if !sameBits(got, want) {
		t.Errorf("got %v, composed %v", got.Float32s()[:d], want.Float32s()[:d])
	}
	Free(qkv, k1, v1, k2, v2, got, want)
}

func sameBits(a, b *Array) bool {
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
