package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
)

// halfRound is x rounded to f16 and widened back: what a 16-bit cache
// gives attention for x.
func halfRound(x []float32) []float32 {
	out := make([]float32, len(x))
	for i, f := range x {
		out[i] = mlx.F16ToF32(mlx.F32ToF16(f))
	}
	return out
}

func randKV(r *rand.Rand, b, h, l, d int) (*mlx.Array, []float32) {
	v := make([]float32, b*h*l*d)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return mlx.FromSlice(v, b, h, l, d), v
}

func equalF32(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// A 16-bit cache (QuantizeCaches with Bits 16) stores f16 and hands
// attention float32 keys and values that are the inputs rounded to f16,
// at half float32's bytes; a snapshot, a trim and a restore keep those
// bits; a prefix range copied out and appended to another 16-bit cache
// gives the same positions; and a row joining a batch keeps its f16
// storage there, beside a float32 row.
func TestHalfKVCache(t *testing.T) {
	mlxtest.NoLeaks(t)
	r := rand.New(rand.NewPCG(16, 1))
	cs := QuantizeCaches([]Cache{NewKVCache(), NewKVCache()}, KVQuant{Bits: KVHalfBits})
	c, f := cs[0].(*KVCache), cs[1].(*KVCache)
	QuantizeCaches([]Cache{f}, KVQuant{Bits: KVFloat32Bits}) // no-op
	if !c.Half() {
		t.Fatal("QuantizeCaches(16) left the cache float32")
	}
	f.st.half = false
	s := mlx.NewScope()
	k1, kv1 := randKV(r, 1, 2, 5, 8)
	v1, vv1 := randKV(r, 1, 2, 5, 8)
	k, v := c.Update(k1, v1)
	f.Update(k1, v1)
	if k.DType() != mlx.Float32 || c.st.k.DType() != mlx.Float16 {
		t.Fatalf("hands attention %v over %v storage", k.DType(), c.st.k.DType())
	}
	equalF32(t, "keys", k.Float32s(), halfRound(kv1))
	equalF32(t, "values", v.Float32s(), halfRound(vv1))
	if c.Bytes()*2 != f.Bytes() {
		t.Fatalf("16-bit cache holds %d bytes, float32 %d", c.Bytes(), f.Bytes())
	}
	s.Close()

	snap := c.Snapshot()
	c.Trim(3)
	s = mlx.NewScope()
	k2, _ := randKV(r, 1, 2, 1, 8)
	c.Update(k2, k2)
	s.Close()
	if err := c.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if c.Offset() != 5 || !c.Half() {
		t.Fatalf("restored %d positions, half %v", c.Offset(), c.Half())
	}
	s = mlx.NewScope()
	kr, vr := c.st.arrays(0)
	equalF32(t, "restored keys", kr.Float32s(), halfRound(kv1))
	equalF32(t, "restored values", vr.Float32s(), halfRound(vv1))

	// Prefix reuse: positions [1, 4) into a fresh 16-bit cache.
	pk, pv, ok := KVRange(c, 1, 4)
	if !ok || pk.DType() != mlx.Float16 {
		t.Fatalf("KVRange: ok %v, %v", ok, pk)
	}
	d := QuantizeCaches([]Cache{NewKVCache()}, KVQuant{Bits: KVHalfBits})[0]
	if !AppendKV(d, pk, pv) {
		t.Fatal("AppendKV refused a 16-bit range")
	}
	dk, _ := d.(*KVCache).st.arrays(0)
	hk := halfRound(kv1)
	equalF32(t, "prefix keys", dk.Float32s(), append(append([]float32(nil), hk[8:32]...), hk[48:72]...))

	// Batched rows: a 16-bit row and a float32 row share a batch, each
	// keeping its own storage.
	bc := NewBatchCache(0)
	for _, row := range []Cache{c, f} {
		if _, err := bc.Add(row); err != nil {
			t.Fatal(err)
		}
	}
	if got := bc.Row(0).(*KVCache).st.k.DType(); got != mlx.Float16 {
		t.Fatalf("batch stores %v for a 16-bit row", got)
	}
	if got := bc.Row(1).(*KVCache).st.k.DType(); got != mlx.Float32 {
		t.Fatalf("batch stores %v for a float32 row", got)
	}
	s.Close()
	mlx.Free(pk, pv)
	FreeCaches([]Cache{d, bc}) // bc frees c and f
}
