package nn

import "hark/mlx"

// Arrays derived at load from tensors already loaded, for graphs that use
// a checkpoint's matrix in another form (DeepSeek's absorbed attention).

// Adopt records a derived array (split or dequantized at load from
// tensors already loaded) as one the model owns, like the arrays Array
// returns.
func (w *Weights) Adopt(a *mlx.Array) *mlx.Array {
	w.track(a)
	return a
}

// FloatWeight returns the [out, in] float weight of a layer Linear made,
// expanding a quantized one and releasing its quantized arrays, or nil
// when its tensors failed to load (already reported). The weight stays
// the model's.
func (w *Weights) FloatWeight(l Layer) *mlx.Array {
	switch l := l.(type) {
	case *Linear:
		return l.Weight
	case *QuantizedLinear:
		if l.M == nil {
			return nil
		}
		d := l.Dequantize() // copies a matrix still in the checkpoint's bytes
		w.forgetQuant(&l.QuantWeight)
		w.doneWithBytes(l.M)
		for _, a := range l.M.Arrays() {
			w.untrack(a)
			a.Free()
		}
		l.M = nil
		return w.Adopt(d)
	}
	return nil
}

// Drop frees a loaded array whose contents the graph has folded into
// another (the scales of a matrix it expanded).
func (w *Weights) Drop(a *mlx.Array) {
	w.untrack(a)
	a.Free()
}
