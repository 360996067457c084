package mlx

import "fmt"

// QuantizedKV is one side (keys or values) of a cache stored in MLX's
// affine format per head, as Quantize lays out rows of Dim values:
//
//	Packed [B, H, cap, Dim*Bits/32] uint32
//	Scales [B, H, cap, Dim/Group]
//	Biases [B, H, cap, Dim/Group]
type QuantizedKV struct {
	Packed, Scales, Biases *Array
}

// QuantizedDecodeParams describes QuantizedDecodeAttention: positions
// [0, N) of the caches are read, scores are multiplied by Scale.
type QuantizedDecodeParams struct {
	N           int
	Scale       float32
	Group, Bits int
}

// QuantizedDecodeAttender is implemented by backends with a fused
// QuantizedDecodeAttention. It returns the [B, Hq, 1, Dv] result, or nil
// when it does not handle these arrays (the composed ops then run).
type QuantizedDecodeAttender interface {
	QuantizedDecodeAttention(q *Array, k, v QuantizedKV, p QuantizedDecodeParams) *Array
}

// QuantizedDecodeAttention is attention of one query row per head, q
// [B, Hq, 1, D], over the first p.N positions of quantized keys and values
// with Hkv heads (Hq a multiple of Hkv; query head h reads kv head
// h/(Hq/Hkv)): softmax(Scale * q·dequant(k)) · dequant(v), as [B, Hq, 1, Dv].
// Every position is visible (a decode step). A backend may fuse it; the
// fallback is QuantizedDecodeAttentionComposed.
func QuantizedDecodeAttention(q *Array, k, v QuantizedKV, p QuantizedDecodeParams) *Array {
	be := backendOf("QuantizedDecodeAttention", q, k.Packed, k.Scales, k.Biases, v.Packed, v.Scales, v.Biases)
	checkQuantizedDecode(q, k, v, p)
	if fa, ok := be.(QuantizedDecodeAttender); ok {
		if out := fa.QuantizedDecodeAttention(q, k, v, p); out != nil {
			return out
		}
	}
	return QuantizedDecodeAttentionComposed(q, k, v, p)
}

func checkQuantizedDecode(q *Array, k, v QuantizedKV, p QuantizedDecodeParams) {
	bad := func(f string, a ...any) { panic(fmt.Sprintf("mlx.QuantizedDecodeAttention: "+f, a...)) }
	if p.Bits <= 0 || 32%p.Bits != 0 || p.Group <= 0 {
		bad("bits %d / group %d", p.Bits, p.Group)
	}
	if len(q.shape) != 4 || q.shape[2] != 1 || !q.dtype.IsFloat() {
		bad("queries %v must be float [B, H, 1, D]", q)
	}
	b, hq, d := q.shape[0], q.shape[1], q.shape[3]
	var hkv, capacity int
	for i, s := range []QuantizedKV{k, v} {
		what := []string{"keys", "values"}[i]
		for _, a := range []*Array{s.Packed, s.Scales, s.Biases} {
			if a == nil || len(a.shape) != 4 {
				bad("%s: codes, scales and biases must be [B, H, cap, _]", what)
			}
		}
		pk := s.Packed
		if i == 0 {
			hkv, capacity = pk.shape[1], pk.shape[2]
		}
		w := pk.shape[3] * 32 / p.Bits
		if pk.dtype != Uint32 || pk.shape[0] != b || pk.shape[1] != hkv || pk.shape[2] != capacity || w%p.Group != 0 {
			bad("%s codes %v must be uint32 [%d, %d, %d, _] in groups of %d", what, pk, b, hkv, capacity, p.Group)
		}
		if i == 0 && w != d {
			bad("keys of %d values for queries of %d", w, d)
		}
		for _, a := range []*Array{s.Scales, s.Biases} {
			if !a.dtype.IsFloat() || a.shape[0] != b || a.shape[1] != hkv || a.shape[2] != capacity || a.shape[3] != w/p.Group {
				bad("%s scales/biases %v must be float [%d, %d, %d, %d]", what, a, b, hkv, capacity, w/p.Group)
			}
		}
	}
	if hkv == 0 || hq%hkv != 0 {
		bad("%d query heads for %d kv heads", hq, hkv)
	}
	if p.N <= 0 || p.N > capacity {
		bad("%d positions of a cache of %d", p.N, capacity)
	}
}

// QuantizedDecodeAttentionComposed is QuantizedDecodeAttention from the
// general ops (two QuantizedMatmul and a softmax per batch row and kv
// head): the reference the fused backends are tested against.
func QuantizedDecodeAttentionComposed(q *Array, k, v QuantizedKV, p QuantizedDecodeParams) *Array {
	s := NewScope()
	defer s.Close()
	b, hq, d := q.shape[0], q.shape[1], q.shape[3]
	hkv, n := k.Packed.shape[1], p.N
	rep := hq / hkv
	qs := MulScalar(q, float64(p.Scale))
	part := func(a *Array, bi, h int) *Array {
		x := Slice(a, []int{bi, h, 0, 0}, []int{bi + 1, h + 1, n, a.shape[3]}, nil)
		return Reshape(x, n, a.shape[3])
	}
	rows := make([]*Array, 0, b)
	for bi := range b {
		heads := make([]*Array, 0, hkv)
		for h := range hkv {
			qh := Reshape(Copy(Slice(qs, []int{bi, h * rep, 0, 0}, []int{bi + 1, (h + 1) * rep, 1, d}, nil)), rep, d)
			scores := QuantizedMatmul(qh, part(k.Packed, bi, h), part(k.Scales, bi, h), part(k.Biases, bi, h), true, p.Group, p.Bits)
			pr := Softmax(scores, -1)
			o := QuantizedMatmul(pr, part(v.Packed, bi, h), part(v.Scales, bi, h), part(v.Biases, bi, h), false, p.Group, p.Bits)
			heads = append(heads, Reshape(o, 1, rep, 1, o.shape[1]))
		}
		rows = append(rows, Concatenate(heads, 1))
	}
	if len(rows) == 1 {
		return s.Keep(rows[0])
	}
	return s.Keep(Concatenate(rows, 0))
}
