package mlx

import "fmt"

// DecodeAttentionParams describes the attention of DecodeAttention.
// Backends get it checked, with the RoPE scales defaulted and its Offset
// set to the position.
type DecodeAttentionParams struct {
	Heads, KVHeads, HeadDim int
	// RoPE rotates the queries and the new key; its Offset is ignored
	// (the position is DecodeAttention's pos).
	RoPE RoPEParams
	// Scale multiplies the scores (usually 1/sqrt(HeadDim)).
	Scale float32
}

// DecodeAttention is one position of causal grouped-query attention read
// straight from a fused q/k/v projection, as a decode step with a KV cache
// runs it:
//
//	qkv    [B, 1, (Heads + 2*KVHeads) * HeadDim]: queries, keys, values
//	keys   [B, KVHeads, cap, HeadDim], cap > pos: the cache's storage,
//	       of qkv's dtype or float16 (a 16-bit KV cache)
//	values [B, KVHeads, cap, HeadDim], of keys' dtype
//
// It rotates the queries and the new key by RoPE at position pos, writes
// the new key and value into keys and values at pos (in place, as
// SliceAssign does), attends over positions [0, pos] and returns
// [B, 1, Heads*HeadDim]: what splitting the heads, RoPE, the cache writes,
// ScaledDotProductAttention and merging the heads give, in one op. At
// decode those small steps cost more than their arithmetic.
func DecodeAttention(qkv, keys, values *Array, pos int, p DecodeAttentionParams) *Array {
	be := backendOf("DecodeAttention", qkv, keys, values, p.RoPE.Freqs)
	h, hkv, d := p.Heads, p.KVHeads, p.HeadDim
	if h <= 0 || hkv <= 0 || d <= 0 || h%hkv != 0 {
		panic(fmt.Sprintf("mlx.DecodeAttention: %d heads, %d kv heads of %d", h, hkv, d))
	}
	if len(qkv.shape) != 3 || qkv.shape[1] != 1 || qkv.shape[2] != (h+2*hkv)*d || !qkv.dtype.IsFloat() {
		panic(fmt.Sprintf("mlx.DecodeAttention: qkv %v must be float [B, 1, %d]", qkv, (h+2*hkv)*d))
	}
	b := qkv.shape[0]
	for _, c := range []*Array{keys, values} {
		if len(c.shape) != 4 || c.shape[0] != b || c.shape[1] != hkv || c.shape[3] != d || (c.dtype != qkv.dtype && c.dtype != Float16) || c.dtype != keys.dtype {
			panic(fmt.Sprintf("mlx.DecodeAttention: cache %v must be [%d, %d, cap, %d] of %v or float16", c, b, hkv, d, qkv.dtype))
		}
	}
	if pos < 0 || pos >= keys.shape[2] || values.shape[2] != keys.shape[2] {
		panic(fmt.Sprintf("mlx.DecodeAttention: position %d outside caches %v / %v", pos, keys.shape, values.shape))
	}
	p.RoPE = ropeParams("DecodeAttention", p.RoPE, d)
	p.RoPE.Offset = pos
	if fa, ok := be.(DecodeAttender); ok {
		if out := fa.DecodeAttention(qkv, keys, values, pos, p); out != nil {
			return out
		}
	}
	return DecodeAttentionComposed(qkv, keys, values, pos, p)
}

// DecodeAttentionComposed is DecodeAttention from the general ops: the
// reference the fused backends are tested against.
func DecodeAttentionComposed(qkv, keys, values *Array, pos int, p DecodeAttentionParams) *Array {
	s := NewScope()
	defer s.Close()
	h, hkv, d, b := p.Heads, p.KVHeads, p.HeadDim, qkv.shape[0]
	hs := Transpose(Reshape(qkv, b, 1, h+2*hkv, d), 0, 2, 1, 3)
	rp := p.RoPE
	rp.Offset = pos
	q := RoPE(SliceAxis(hs, 1, 0, h), rp)
	k := RoPE(SliceAxis(hs, 1, h, h+hkv), rp)
	v := SliceAxis(hs, 1, h+hkv, h+2*hkv)
	SliceAssign(keys, k, []int{0, 0, pos}, []int{b, hkv, pos + 1}, nil)
	SliceAssign(values, v, []int{0, 0, pos}, []int{b, hkv, pos + 1}, nil)
	kv, vv := SliceAxis(keys, 2, 0, pos+1), SliceAxis(values, 2, 0, pos+1)
	if keys.dtype != qkv.dtype {
		// A 16-bit cache (float16) of float queries: attention in theirs.
		kv, vv = AsType(kv, qkv.dtype), AsType(vv, qkv.dtype)
	}
	o := ScaledDotProductAttention(q, kv, vv, p.Scale, CausalMask())
	return s.Keep(Reshape(Transpose(o, 0, 2, 1, 3), b, 1, h*d))
}
