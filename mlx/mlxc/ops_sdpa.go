package mlxc

import (
	"unsafe"

	"hark/mlx"
)

// SDPA implements mlx.Backend with MLX's fused attention. MLX has a
// causal mode (queries aligned to the end of the keys, as Hark's) or one
// array mask; sliding windows, a causal mask combined with an array, and
// more queries than keys are given to it as one explicit mask. A query
// whose keys are all masked gives zeros, as on the cpu backend.
func (b *Backend) SDPA(q, k, v *mlx.Array, scale float32, mask mlx.Mask, out *mlx.Array) {
	b.op("SDPA", out, func(c *g) array {
		qh, kh, vh := c.halfOnCPU(handle(q)), c.halfOnCPU(handle(k)), c.halfOnCPU(handle(v))
		lq, lk := q.Dims()[2], k.Dims()[2]
		if mask.Array == nil && (!mask.Causal || (mask.Window == 0 && lq <= lk)) {
			mode := ""
			if mask.Causal {
				mode = "causal"
			}
			var r array
			return c.ok(c.l.mlx_fast_scaled_dot_product_attention(&r, qh, kh, vh, scale, mode, 0, 0, c.b.s), r)
		}
		// allowed: a bool mask (true = attend) or nil; add: an additive one
		var allowed, add array
		if mask.Causal {
			m := make([]uint8, lq*lk+1)
			off := lk - lq
			for i := 0; i < lq; i++ {
				for j := 0; j < lk; j++ {
					if j <= i+off && (mask.Window <= 0 || j > i+off-mask.Window) {
						m[i*lk+j] = 1
					}
				}
			}
			allowed = c.fromHost(unsafe.Pointer(&m[0]), []int{lq, lk}, dtBool)
		}
		if mask.Array != nil {
			mh := handle(mask.Array)
			if c.dtypeOf(mh) == dtBool {
				if allowed != 0 {
					allowed = c.bin(c.l.mlx_logical_and, allowed, mh)
				} else {
					allowed = mh
				}
			} else {
				add = mh
			}
		}
		final := allowed
		if add != 0 {
			final = add
			if allowed != 0 {
				final = c.where(allowed, add, c.scalar(negInf, c.dtypeOf(add)))
			}
		}
		var r array
		r = c.ok(c.l.mlx_fast_scaled_dot_product_attention(&r, qh, kh, vh, scale, "array", final, 0, c.b.s), r)
		// rows with no key to attend to
		live := allowed
		if add != 0 {
			live = c.bin(c.l.mlx_greater, final, c.scalar(negInf, c.dtypeOf(final)))
		}
		live = c.anyAxis(live, -1, true)
		return c.where(live, r, c.scalar(0, c.dtypeOf(r)))
	})
}
