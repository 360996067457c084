package mlx

import (
	"fmt"
	"slices"
)

// Mask selects the attention mask of ScaledDotProductAttention. The zero
// value is "no mask".
type Mask struct {
	// Causal lets query i see key j only when j <= i + (Lk - Lq): queries
	// are aligned to the end of the keys, as with a KV cache.
	Causal bool
	// Window, with Causal, also hides keys more than Window-1 positions
	// before the query (sliding-window attention); 0 means unlimited.
	Window int
	// Array is an explicit mask broadcastable to [B, Hq, Lq, Lk]: bool
	// (true = attend) or float (added to the scores). It may be combined
	// with Causal.
	Array *Array
}

// CausalMask is the "causal" mask of mlx.core.fast.scaled_dot_product_attention.
func CausalMask() Mask { return Mask{Causal: true} }

// SlidingWindowMask is a causal mask that also limits each query to the
// window most recent keys (itself included).
func SlidingWindowMask(window int) Mask { return Mask{Causal: true, Window: window} }

// ArrayMask wraps an explicit bool or additive mask.
func ArrayMask(m *Array) Mask { return Mask{Array: m} }

// ScaledDotProductAttention computes softmax(scale * q @ k^T + mask) @ v.
// q is [B, Hq, Lq, D], k is [B, Hkv, Lk, D], v is [B, Hkv, Lk, Dv], with Hq
// a multiple of Hkv (grouped-query attention: query head h reads kv head
// h / (Hq/Hkv)). The output is [B, Hq, Lq, Dv] in q's dtype; scores and
// softmax are computed in float32. A query row whose keys are all masked
// gives zeros (MLX would give NaN). Logit soft-capping is left to callers.
func ScaledDotProductAttention(q, k, v *Array, scale float32, mask Mask) *Array {
	be := backendOf("ScaledDotProductAttention", q, k, v, mask.Array)
	if len(q.shape) != 4 || len(k.shape) != 4 || len(v.shape) != 4 {
		panic(fmt.Sprintf("mlx.ScaledDotProductAttention: q %v k %v v %v must be 4-D [B,H,L,D]", q.shape, k.shape, v.shape))
	}
	b, hq, lq, d := q.shape[0], q.shape[1], q.shape[2], q.shape[3]
	hkv, lk := k.shape[1], k.shape[2]
	if k.shape[0] != b || v.shape[0] != b || k.shape[3] != d || v.shape[1] != hkv || v.shape[2] != lk || hkv == 0 || hq%hkv != 0 {
		panic(fmt.Sprintf("mlx.ScaledDotProductAttention: incompatible q %v k %v v %v", q.shape, k.shape, v.shape))
	}
	if !q.dtype.IsFloat() || !k.dtype.IsFloat() || !v.dtype.IsFloat() {
		panic("mlx.ScaledDotProductAttention: inputs must be floating point")
	}
	if mask.Array != nil {
		s, err := BroadcastShapes(mask.Array.shape, []int{b, hq, lq, lk})
		if err != nil || !slices.Equal(s, []int{b, hq, lq, lk}) {
			panic(fmt.Sprintf("mlx.ScaledDotProductAttention: mask %v does not broadcast to %v", mask.Array.shape, []int{b, hq, lq, lk}))
		}
	}
	if mask.Window < 0 || (mask.Window > 0 && !mask.Causal) {
		panic(fmt.Sprintf("mlx.ScaledDotProductAttention: window %d needs Causal and must not be negative", mask.Window))
	}
	out := newArray(be, q.dtype, []int{b, hq, lq, v.shape[3]})
	be.SDPA(q, k, v, scale, mask, out)
	return out
}

// CreateCausalMask returns a [lq, lk] bool mask (true = attend) with
// queries aligned to the end of the keys, optionally limited to a sliding
// window (0 = none). Handy for building custom masks; SDPA itself takes
// Mask{Causal: true} without materialising anything.
func CreateCausalMask(lq, lk, window int) *Array {
	m := make([]bool, lq*lk)
	off := lk - lq
	for i := 0; i < lq; i++ {
		for j := 0; j < lk; j++ {
			m[i*lk+j] = CausalAllowed(i, j, off, window)
		}
	}
	return FromSlice(m, lq, lk)
}

// CausalAllowed reports whether query row i may attend to key j when the
// queries are aligned to the end of the keys (off = Lk - Lq), within a
// sliding window of that many positions (0: none). Backends use it to
// build masks exactly as CreateCausalMask does.
func CausalAllowed(i, j, off, window int) bool {
	if j > i+off {
		return false
	}
	return window <= 0 || j > i+off-window
}

// Tril keeps x's entries on and below diagonal k of the last two axes and
// zeroes the rest.
func Tril(x *Array, k int) *Array { return triMask("Tril", x, k, true) }

// Triu keeps the entries on and above diagonal k of the last two axes.
func Triu(x *Array, k int) *Array { return triMask("Triu", x, k, false) }

func triMask(op string, x *Array, k int, lower bool) *Array {
	x.check(op)
	if len(x.shape) < 2 {
		panic("mlx." + op + ": needs at least 2 dims")
	}
	r, c := x.shape[len(x.shape)-2], x.shape[len(x.shape)-1]
	m := make([]bool, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if lower {
				m[i*c+j] = j-i <= k
			} else {
				m[i*c+j] = j-i >= k
			}
		}
	}
	mask := FromSlice(m, r, c)
	zero := Zeros(nil, x.dtype)
	out := Where(mask, x, zero)
	Free(mask, zero)
	return out
}

// Tri returns an [n, m] array with ones on and below diagonal k.
func Tri(n, m, k int, dt DType) *Array {
	o := Ones([]int{n, m}, dt)
	defer o.Free()
	return Tril(o, k)
}
