package nn

import "hark/mlx"

// StackedExperts loads one projection of every expert stacked as a single
// [e, out, in] tensor at path (path.weight, with path.scales, and
// path.biases unless mxfp4, when MLX-quantized), as mlx-lm writes a SwitchGLU's
// projections under names other than switch_mlp (Gemma 4's
// experts.switch_glu). A missing tensor is reported by name.
func (w *Weights) StackedExperts(path string, e, in, out int) *ExpertMatrix {
	m := &ExpertMatrix{experts: e, out: out, inDim: in}
	if !w.names[path+".weight"] {
		w.Failf("missing tensor %s.weight", path)
		return m
	}
	w.stackedExperts(m, path)
	return m
}

// DenseExperts wraps a float [e, out, in] tensor already loaded (a fused
// projection a graph splits itself) as an ExpertMatrix.
func DenseExperts(a *mlx.Array) *ExpertMatrix {
	m := &ExpertMatrix{W: a}
	if a != nil && a.Ndim() == 3 {
		m.experts, m.out, m.inDim = a.Dim(0), a.Dim(1), a.Dim(2)
	}
	return m
}
