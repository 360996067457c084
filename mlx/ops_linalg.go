package mlx

import (
	"fmt"
	"slices"
)

// Matmul is a @ b with numpy semantics: the last two axes multiply
// ([..., M, K] @ [..., K, N]), leading (batch) axes broadcast, and a 1-D
// operand is treated as a row (a) or column (b) vector whose axis is then
// dropped. Inputs must be floating point; the result has their promoted
// dtype and is computed in float32.
func Matmul(a, b *Array) *Array { return matmul("Matmul", a, b, false) }

// MatmulT is a @ swapaxes(b, -1, -2) without materialising the transpose:
// b is [..., N, K], the layout of Linear weights. Linear layers should use
// it: MatmulT(x, w) is PyTorch/MLX's x @ w.T.
func MatmulT(a, b *Array) *Array { return matmul("MatmulT", a, b, true) }

func matmul(op string, a, b *Array, transB bool) *Array {
	be := backendOf(op, a, b)
	if len(a.shape) == 0 || len(b.shape) == 0 {
		panic(fmt.Sprintf("mlx.%s: scalar operand (%v, %v)", op, a.shape, b.shape))
	}
	dt := PromoteTypes(a.dtype, b.dtype)
	if !dt.IsFloat() {
		panic(fmt.Sprintf("mlx.%s: integer matmul (%v, %v) is not supported", op, a.dtype, b.dtype))
	}
	as, bs := a.shape, b.shape
	va, vb := len(as) == 1, len(bs) == 1
	if va {
		as = []int{1, as[0]}
	}
	if vb {
		if transB {
			bs = []int{1, bs[0]}
		} else {
			bs = []int{bs[0], 1}
		}
	}
	m, k := as[len(as)-2], as[len(as)-1]
	kb, n := bs[len(bs)-2], bs[len(bs)-1]
	if transB {
		kb, n = n, kb
	}
	if k != kb {
		panic(fmt.Sprintf("mlx.%s: inner dimensions differ: %v and %v", op, a.shape, b.shape))
	}
	batch := mustBroadcast(op, as[:len(as)-2], bs[:len(bs)-2])
	shape := append(append([]int(nil), batch...), m, n)
	ra := reshapeIfNeeded(castTo(a, dt), as, a)
	cb := b
	if !(dt == Float32 && a.dtype == Float32 && (b.dtype == Float16 || b.dtype == BFloat16)) {
		cb = castTo(b, dt) // a 16-bit weight goes as it is (see Backend.Matmul)
	}
	rb := reshapeIfNeeded(cb, bs, b)
	out := newArray(be, dt, shape)
	be.Matmul(ra, rb, transB, out)
	if ra != a {
		ra.Free()
	}
	if rb != b {
		rb.Free()
	}
	if va || vb {
		final := append([]int(nil), batch...)
		if !va {
			final = append(final, m)
		}
		if !vb {
			final = append(final, n)
		}
		r := Reshape(out, final...)
		out.Free()
		return r
	}
	return out
}

// reshapeIfNeeded views c as shape; it frees c when c is a temporary
// (c != orig) and returns a new array the caller must free unless it is orig.
func reshapeIfNeeded(c *Array, shape []int, orig *Array) *Array {
	if slices.Equal(c.shape, shape) {
		return c
	}
	r := Reshape(c, shape...)
	if c != orig {
		c.Free()
	}
	return r
}

// Linear is x @ w.T + bias (bias may be nil), with w in [out, in] layout as
// stored by Hugging Face and MLX checkpoints.
func Linear(x, w, bias *Array) *Array {
	y := MatmulT(x, w)
	if bias == nil {
		return y
	}
	if ba, ok := y.backend.(BiasAdder); ok && bias.backend == y.backend && y.dtype == Float32 && bias.dtype.IsFloat() &&
		len(bias.shape) == 1 && len(y.shape) > 0 && bias.shape[0] == y.shape[len(y.shape)-1] && ba.AddBiasInPlace(y, bias) {
		return y
	}
	r := Add(y, bias)
	y.Free()
	return r
}
