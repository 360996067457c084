package mlxc

import (
	"unsafe"

	"hark/mlx"
)

// halfOnCPU widens a half-precision input where MLX computes on its CPU
// kernels, which keep some intermediates in the half type; Hark's
// semantics (float32 inside, one rounding) hold for them then. On Metal
// MLX's kernels accumulate in float32 themselves.
func (c *g) halfOnCPU(x array) array {
	if c.b.gpu {
		return x
	}
	return c.wide(x)
}

// Matmul implements mlx.Backend; transB multiplies by b's last two axes
// swapped (weights in [out, in] layout).
func (b *Backend) Matmul(x, y *mlx.Array, transB bool, out *mlx.Array) {
	b.op("Matmul", out, func(c *g) array {
		xh, yh := c.halfOnCPU(handle(x)), c.halfOnCPU(handle(y))
		if transB {
			yh = c.swapLast(yh)
		}
		return c.bin(c.l.mlx_matmul, xh, yh)
	})
}

// Softmax implements mlx.Backend over the last axis (axis). A row that is
// all -Inf gives zeros, as the cpu backend gives (MLX gives NaN).
func (b *Backend) Softmax(x *mlx.Array, axis int, lse bool, out *mlx.Array) {
	b.op("Softmax", out, func(c *g) array {
		xh := c.wide(handle(x))
		var r array
		if lse {
			return c.ok(c.l.mlx_logsumexp_axis(&r, xh, int32(axis), true, c.b.s), r)
		}
		r = c.ok(c.l.mlx_softmax_axis(&r, xh, int32(axis), true, c.b.s), r)
		dead := c.bin(c.l.mlx_equal, c.maxAxis(xh, axis, true), c.f32(negInf))
		return c.where(dead, c.f32(0), r)
	})
}

// RMSNorm implements mlx.Backend with MLX's fused kernel, which the cpu
// backend reproduces (the normalised value is rounded to x's dtype before
// the weight).
func (b *Backend) RMSNorm(x, w *mlx.Array, eps float32, out *mlx.Array) {
	b.op("RMSNorm", out, func(c *g) array {
		var r array
		return c.ok(c.l.mlx_fast_rms_norm(&r, handle(x), handle(w), eps, c.b.s), r)
	})
}

// LayerNorm implements mlx.Backend with MLX's fused kernel.
func (b *Backend) LayerNorm(x, w, bias *mlx.Array, eps float32, out *mlx.Array) {
	b.op("LayerNorm", out, func(c *g) array {
		var r array
		return c.ok(c.l.mlx_fast_layer_norm(&r, handle(x), handle(w), handle(bias), eps, c.b.s), r)
	})
}

// SwiGLU implements mlx.Backend: silu(gate) * up in float32.
func (b *Backend) SwiGLU(gate, up, out *mlx.Array) {
	b.op("SwiGLU", out, func(c *g) array { return c.mul(c.silu(handle(gate)), handle(up)) })
}

// RoPE implements mlx.Backend with MLX's fast rope, whose freqs are the
// same per-pair wavelengths as RoPEParams.Freqs. MLX has no MScale: it
// multiplies the rotated features afterwards, in float32.
func (b *Backend) RoPE(x *mlx.Array, p mlx.RoPEParams, freqs *mlx.Array, out *mlx.Array) {
	b.op("RoPE", out, func(c *g) array {
		xh := handle(x)
		shape := out.Dims()
		if len(shape) < 3 {
			// MLX's rope wants [..., L, D] with at least one leading axis
			xh = c.reshape(xh, append([]int{1}, shape...))
		}
		scaled := p.MScale != 0 && p.MScale != 1
		if scaled {
			xh = c.wide(xh)
		} else {
			xh = c.halfOnCPU(xh) // MLX's CPU rope rounds in the half type
		}
		base := optionalFloat(0)
		if freqs == nil {
			base = someFloat(p.Base)
		}
		scale := p.Scale
		if scale == 0 {
			scale = 1
		}
		var r array
		r = c.ok(c.l.mlx_fast_rope(&r, xh, int32(p.Dims), p.Traditional, base, scale, int32(p.Offset), handle(freqs), c.b.s), r)
		if scaled {
			d := shape[len(shape)-1]
			ms := make([]float32, d)
			for i := range ms {
				ms[i] = 1
				if i < p.Dims {
					ms[i] = p.MScale
				}
			}
			r = c.mul(r, c.fromHost(unsafe.Pointer(&ms[0]), []int{d}, dtFloat32))
		}
		if len(shape) < 3 {
			r = c.reshape(r, shape)
		}
		return r
	})
}

// Conv1d implements mlx.Backend: x [N, L, Cin], w [Cout, K, Cin], MLX's
// own layout.
func (b *Backend) Conv1d(x, w *mlx.Array, stride, padding, dilation int, out *mlx.Array) {
	b.op("Conv1d", out, func(c *g) array {
		dt := mlxDtype(out.DType())
		xh, wh := handle(x), handle(w)
		if c.dtypeOf(xh) != dt {
			xh = c.astype(xh, dt)
		}
		if c.dtypeOf(wh) != dt {
			wh = c.astype(wh, dt)
		}
		xh, wh = c.halfOnCPU(xh), c.halfOnCPU(wh)
		var r array
		return c.ok(c.l.mlx_conv1d(&r, xh, wh, int32(stride), int32(padding), int32(dilation), 1, c.b.s), r)
	})
}

// Quantize implements mlx.Backend (mode "affine").
func (b *Backend) Quantize(w *mlx.Array, groupSize, bits int, packed, scales, biases *mlx.Array) (err error) {
	defer mlx.CatchOpError(&err)
	b.w.run(func() {
		c := &g{b: b, l: b.lib, op: "Quantize"}
		defer c.release()
		v := c.l.mlx_vector_array_new()
		defer c.l.mlx_vector_array_free(v)
		c.b.check(c.op, c.l.mlx_quantize(&v, handle(w), someInt(groupSize), someInt(bits), "affine", 0, c.b.s))
		if n := c.l.mlx_vector_array_size(v); n < 3 {
			panic(opError(c.op, "MLX's quantize returned fewer than 3 arrays"))
		}
		for i, out := range []*mlx.Array{packed, scales, biases} {
			var r array
			r = c.ok(c.l.mlx_vector_array_get(&r, v, uintptr(i)), r)
			c.finish(out, r)
		}
	})
	return nil
}

// Dequantize implements mlx.Backend (mode "affine").
func (b *Backend) Dequantize(packed, scales, biases *mlx.Array, groupSize, bits int, out *mlx.Array) {
	b.op("Dequantize", out, func(c *g) array {
		var r array
		return c.ok(c.l.mlx_dequantize(&r, handle(packed), handle(scales), handle(biases),
			someInt(groupSize), someInt(bits), "affine", 0, noDtype, c.b.s), r)
	})
}

// QuantizedMatmul implements mlx.Backend (mode "affine").
func (b *Backend) QuantizedMatmul(x, w, scales, biases *mlx.Array, transpose bool, groupSize, bits int, out *mlx.Array) {
	b.op("QuantizedMatmul", out, func(c *g) array {
		var r array
		// MLX's CPU kernel accumulates half inputs in the half type
		return c.ok(c.l.mlx_quantized_matmul(&r, c.halfOnCPU(handle(x)), handle(w), handle(scales), handle(biases),
			transpose, someInt(groupSize), someInt(bits), "affine", c.b.s), r)
	})
}
