package mlx

import (
	"fmt"
	"slices"
)

// Softmax along axis, computed in float32 with the maximum subtracted
// (MLX's precise mode) whatever the input dtype; the output keeps x's dtype.
// Integer inputs give float32. A row that is entirely -Inf gives zeros
// (MLX gives NaN), so fully masked rows stay harmless.
func Softmax(x *Array, axis int) *Array { return softmaxLike("Softmax", x, axis, false, true) }

// LogSumExp along axis: log(sum(exp(x))), stable, computed in float32.
func LogSumExp(x *Array, axis int, keepDims bool) *Array {
	return softmaxLike("LogSumExp", x, axis, true, keepDims)
}

// LogSoftmax is x - LogSumExp(x, axis).
func LogSoftmax(x *Array, axis int) *Array {
	l := LogSumExp(x, axis, true)
	defer l.Free()
	return Sub(x, l)
}

func softmaxLike(op string, x *Array, axis int, lse, keep bool) *Array {
	be := backendOf(op, x)
	axis = normAxis(op, axis, len(x.shape))
	xf := x
	if !x.dtype.IsFloat() {
		xf = AsType(x, Float32)
		defer xf.Free()
	}
	// the backend reduces the last axis; move axis there if needed
	xt := xf
	if axis != len(x.shape)-1 {
		xt = MoveAxis(xf, axis, -1)
		defer xt.Free()
	}
	shape := xt.shape
	if lse {
		shape = append(append([]int(nil), shape[:len(shape)-1]...), 1)
	}
	out := newArray(be, xf.dtype, shape)
	be.Softmax(xt, len(shape)-1, lse, out)
	switch {
	case lse && keep && axis != len(x.shape)-1:
		r := MoveAxis(out, -1, axis)
		out.Free()
		return r
	case lse && !keep:
		r := Squeeze(out, -1)
		out.Free()
		return r
	case !lse && axis != len(x.shape)-1:
		r := MoveAxis(out, -1, axis)
		out.Free()
		return r
	}
	return out
}

// RMSNorm is x * rsqrt(mean(x^2, -1) + eps) * w over the last axis
// (mlx.core.fast.rms_norm). w has shape [D] or is nil. Statistics are
// computed in float32; the output has x's dtype.
func RMSNorm(x, w *Array, eps float32) *Array {
	be := backendOf("RMSNorm", x, w)
	normCheck("RMSNorm", x, w)
	out := newArray(be, x.dtype, x.shape)
	be.RMSNorm(x, w, eps, out)
	return out
}

// SwiGLU is Silu(gate) * up, the gating of SwiGLU MLPs (mlx-lm's swiglu),
// with the same float32 results as that composition but in one pass and
// without the intermediate silu array: at decode each small op costs more
// than its arithmetic. gate and up must have the same shape and float
// dtype; other float dtypes take the composition, which rounds the silu to
// that dtype first.
func SwiGLU(gate, up *Array) *Array {
	be := backendOf("SwiGLU", gate, up)
	if !slices.Equal(gate.shape, up.shape) || gate.dtype != up.dtype || !gate.dtype.IsFloat() {
		panic(fmt.Sprintf("mlx.SwiGLU: gate %v and up %v must be float arrays of one shape and dtype", gate, up))
	}
	if gate.dtype != Float32 {
		s := Silu(gate)
		defer s.Free()
		return Mul(s, up)
	}
	out := newArray(be, Float32, gate.shape)
	be.SwiGLU(gate, up, out)
	return out
}

// LayerNorm normalises the last axis to zero mean and unit variance, then
// applies the optional weight and bias ([D] or nil), in float32.
func LayerNorm(x, w, b *Array, eps float32) *Array {
	be := backendOf("LayerNorm", x, w, b)
	normCheck("LayerNorm", x, w)
	normCheck("LayerNorm", x, b)
	out := newArray(be, x.dtype, x.shape)
	be.LayerNorm(x, w, b, eps, out)
	return out
}

func normCheck(op string, x, w *Array) {
	if len(x.shape) == 0 || !x.dtype.IsFloat() {
		panic(fmt.Sprintf("mlx.%s: input %v must be floating point with at least one axis", op, x))
	}
	if w != nil && (len(w.shape) != 1 || w.shape[0] != x.shape[len(x.shape)-1]) {
		panic(fmt.Sprintf("mlx.%s: weight shape %v does not match input %v", op, w.shape, x.shape))
	}
}
