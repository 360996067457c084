package nn

import (
	"hark/mlx"
)

// Layer maps activations to activations. Linear and QuantizedLinear are the
// two kinds the loader builds; graphs hold the interface so a checkpoint can
// quantize some projections and not others (MLX keeps a layer in float when
// its input size does not divide by the group size).
type Layer interface {
	Forward(x *mlx.Array) *mlx.Array
}

// Linear is y = x Wᵀ + b with W in [out, in] layout.
type Linear struct {
	Weight *mlx.Array // [out, in]
	Bias   *mlx.Array // [out] or nil
}

// Forward applies the layer to x [..., in].
func (l *Linear) Forward(x *mlx.Array) *mlx.Array { return mlx.Linear(x, l.Weight, l.Bias) }

// QuantWeight is an MLX affine-quantized matrix (w ≈ scale*q + bias per
// group of input columns). How it is stored is its backend's business
// (mlx.QuantMatrix); nil when its tensors failed to load, which the
// loader has already reported.
type QuantWeight struct {
	M *mlx.QuantMatrix
}

// Dequantize expands the matrix to float.
func (q QuantWeight) Dequantize() *mlx.Array { return q.M.Dequantize() }

// MatmulT computes x @ Wᵀ.
func (q QuantWeight) MatmulT(x *mlx.Array) *mlx.Array { return q.M.MatmulT(x) }

// Take gathers the dequantized rows ids.
func (q QuantWeight) Take(ids *mlx.Array) *mlx.Array { return q.M.Take(ids) }

// QuantizedLinear is Linear over an MLX-quantized weight (mlx.nn.QuantizedLinear).
type QuantizedLinear struct {
	QuantWeight
	Bias *mlx.Array // [out] or nil
}

// Forward applies the layer to x [..., in].
func (l *QuantizedLinear) Forward(x *mlx.Array) *mlx.Array {
	y := l.MatmulT(x)
	if l.Bias == nil {
		return y
	}
	r := mlx.Add(y, l.Bias)
	y.Free()
	return r
}

// Linear loads the projection at path (tensors path.weight, path.bias and,
// when quantized, path.scales/path.biases) mapping in to out features. It
// is quantized exactly when the checkpoint holds path.scales, as in mlx-lm.
func (w *Weights) Linear(path string, in, out int, bias bool) Layer {
	var b *mlx.Array
	if bias {
		b = w.Array(path+".bias", out)
	}
	if q, ok := w.quantized(path, out, in, true); ok {
		l := &QuantizedLinear{QuantWeight: q, Bias: b}
		w.quants = append(w.quants, &l.QuantWeight)
		return l
	}
	return &Linear{Weight: w.Array(path+".weight", out, in), Bias: b}
}

// Embedding maps token ids to rows of a [vocab, dims] table, dense or
// quantized. AsLinear reuses the table as the output head of models with
// tied embeddings.
type Embedding struct {
	Weight *mlx.Array   // dense table, nil when quantized
	Quant  *QuantWeight // quantized table, nil when dense
}

// Forward gathers the rows of ids (any integer shape) giving ids.shape+[dims].
func (e *Embedding) Forward(ids *mlx.Array) *mlx.Array {
	if e.Quant != nil {
		return e.Quant.Take(ids)
	}
	rows := mlx.Take(e.Weight, ids, 0)
	if rows.DType() == mlx.Float32 {
		return rows
	}
	// A 16-bit table (HeldDType) gives float32 activations, the same
	// values a table widened at load gave.
	r := mlx.AsType(rows, mlx.Float32)
	rows.Free()
	return r
}

// AsLinear computes x @ tableᵀ: logits over the vocabulary.
func (e *Embedding) AsLinear(x *mlx.Array) *mlx.Array {
	if e.Quant != nil {
		return e.Quant.MatmulT(x)
	}
	return mlx.MatmulT(x, e.Weight)
}

// Embedding loads the table at path ([vocab, dims], path.weight).
func (w *Weights) Embedding(path string, vocab, dims int) *Embedding {
	if q, ok := w.quantized(path, vocab, dims, true); ok {
		w.quants = append(w.quants, &q)
		return &Embedding{Quant: &q}
	}
	return &Embedding{Weight: w.Array(path+".weight", vocab, dims)}
}

// RMSNorm is x / rms(x) * weight over the last axis.
type RMSNorm struct {
	Weight *mlx.Array
	Eps    float32
}

// Forward normalises x [..., dims].
func (n *RMSNorm) Forward(x *mlx.Array) *mlx.Array { return mlx.RMSNorm(x, n.Weight, n.Eps) }

// RMSNorm loads path.weight ([dims]). Gemma checkpoints store the weight
// as an offset from one (the layer multiplies by 1+w); plusOne folds the
// one in at load time, which computes the same float32 values once instead
// of at every call.
func (w *Weights) RMSNorm(path string, dims int, eps float64, plusOne bool) *RMSNorm {
	wt := w.Array(path+".weight", dims)
	if wt != nil && plusOne {
		wt = w.Replace(wt, mlx.AddScalar(wt, 1))
	}
	return &RMSNorm{Weight: wt, Eps: float32(eps)}
}

// LayerNorm is (x - mean) / std * weight + bias over the last axis.
type LayerNorm struct {
	Weight, Bias *mlx.Array
	Eps          float32
}

// Forward normalises x [..., dims].
func (n *LayerNorm) Forward(x *mlx.Array) *mlx.Array {
	return mlx.LayerNorm(x, n.Weight, n.Bias, n.Eps)
}

// LayerNorm loads path.weight and, when present, path.bias.
func (w *Weights) LayerNorm(path string, dims int, eps float64) *LayerNorm {
	return &LayerNorm{Weight: w.Array(path+".weight", dims), Bias: w.Optional(path+".bias", dims), Eps: float32(eps)}
}

// Projections computes several projections of the same input: q, k and v,
// or an MLP's gate and up. When the parts share one format they are fused
// at load into a single layer whose output is cut apart again, so a decode
// step streams their weights in one matmul (and one hand-off to the worker
// threads) instead of several small ones.
type Projections struct {
	fused Layer   // nil when the parts could not be fused
	parts []Layer // the separate layers otherwise
	at    []int   // where each part after the first starts in fused's output
}

// Forward returns one output per part, in order.
func (p *Projections) Forward(x *mlx.Array) []*mlx.Array {
	if p.fused == nil {
		out := make([]*mlx.Array, len(p.parts))
		for i, l := range p.parts {
			out[i] = l.Forward(x)
		}
		return out
	}
	y := p.fused.Forward(x)
	out := mlx.Split(y, p.at, -1)
	y.Free() // the parts are views that keep the storage
	return out
}

// Joined returns the parts side by side in one array [..., sum of sizes]
// when one fused layer computes them, and false (computing nothing) when
// they are separate layers. A caller that handles the joined output
// itself saves Forward's split into one view per part.
func (p *Projections) Joined(x *mlx.Array) (*mlx.Array, bool) {
	if p.fused == nil {
		return nil, false
	}
	return p.fused.Forward(x), true
}

// Fused wraps a layer the checkpoint already fused (Phi-3's qkv_proj and
// gate_up_proj), whose output holds parts of the given sizes in order.
func Fused(l Layer, sizes []int) *Projections { return &Projections{fused: l, at: offsets(sizes)} }

// offsets gives the start of every part but the first.
func offsets(sizes []int) []int {
	at, n := make([]int, 0, len(sizes)-1), 0
	for _, s := range sizes[:len(sizes)-1] {
		n += s
		at = append(at, n)
	}
	return at
}

// Projections fuses parts (each mapping the same input to sizes[i]
// features) when they are all dense or all quantized alike, with biases on
// all or none; the weights then live only in the fused layer.
func (w *Weights) Projections(parts []Layer, sizes []int) *Projections {
	if f := w.fuse(parts); f != nil {
		return Fused(f, sizes)
	}
	return &Projections{parts: parts}
}

func (w *Weights) fuse(parts []Layer) Layer {
	if len(parts) < 2 {
		return nil
	}
	var dense []*Linear
	var quant []*QuantizedLinear
	var biases []*mlx.Array // one per part, nil entries when unbiased
	for _, l := range parts {
		switch l := l.(type) {
		case *Linear:
			if l.Weight == nil {
				return nil // a missing tensor, already reported
			}
			dense = append(dense, l)
			biases = append(biases, l.Bias)
		case *QuantizedLinear:
			if l.M == nil || len(quant) > 0 && (l.M.GroupSize() != quant[0].M.GroupSize() || l.M.Bits() != quant[0].M.Bits()) {
				return nil
			}
			if l.M.Packed() {
				return nil // already packed: fused only before Loaded
			}
			if len(quant) > 0 && l.M.Affine() != quant[0].M.Affine() {
				return nil // affine and mxfp4 mixed
			}
			quant = append(quant, l)
			biases = append(biases, l.Bias)
		default:
			return nil
		}
	}
	if len(dense) != len(parts) && len(quant) != len(parts) {
		return nil // dense and quantized mixed
	}
	var b *mlx.Array
	switch n := countNonNil(biases); n {
	case 0:
	case len(parts):
		b = w.concat(biases)
	default:
		return nil // biases on some parts only
	}
	if dense != nil {
		ws := make([]*mlx.Array, len(dense))
		for i, l := range dense {
			ws[i] = l.Weight
		}
		return &Linear{Weight: w.concat(ws), Bias: b}
	}
	if f := w.packedParts(quant, b); f != nil {
		return f
	}
	var packed, scales, qbias []*mlx.Array
	for _, l := range quant {
		wq, s, qb, _ := l.M.MLX() // copies a matrix still in the checkpoint's bytes
		packed, scales, qbias = append(packed, wq), append(scales, s), append(qbias, qb)
		w.forgetQuant(&l.QuantWeight)
		w.doneWithBytes(l.M)
	}
	var fb *mlx.Array // nil for mxfp4
	if qbias[0] != nil {
		fb = w.joined(qbias)
	}
	f := &QuantizedLinear{QuantWeight: QuantWeight{M: mlx.NewQuantMatrix(
		w.joined(packed), w.joined(scales), fb, quant[0].M.GroupSize(), quant[0].M.Bits())}, Bias: b}
	// Packed now, from the joined arrays, which then go: moving them off
	// the heap first (track) would copy every fused matrix once more for
	// nothing, a sixth of a quantized model's load time.
	if replaced := f.M.Pack(); replaced != nil {
		mlx.Free(replaced...)
		for _, a := range f.M.Arrays() {
			w.track(a)
			w.packed += int64(a.Size() * a.DType().Size())
		}
		return f
	}
	for _, a := range f.M.Arrays() {
		w.track(a)
	}
	w.quants = append(w.quants, &f.QuantWeight)
	return f
}

// packedParts fuses quant straight into the backend's packed layout
// (mlx.PackedQuantMatrices), skipping the joined MLX-layout copy, or
// returns nil having changed nothing.
func (w *Weights) packedParts(quant []*QuantizedLinear, b *mlx.Array) *QuantizedLinear {
	ms := make([]*mlx.QuantMatrix, len(quant))
	for i, l := range quant {
		ms[i] = l.M
	}
	m := mlx.PackedQuantMatrices(ms)
	if m == nil {
		return nil
	}
	for _, l := range quant {
		w.forgetQuant(&l.QuantWeight)
		for _, a := range l.M.Arrays() {
			w.untrack(a)
			a.Free()
		}
		w.doneWithBytes(l.M)
	}
	for _, a := range m.Arrays() {
		w.track(a)
		w.packed += int64(a.Size() * a.DType().Size())
	}
	return &QuantizedLinear{QuantWeight: QuantWeight{M: m}, Bias: b}
}

// joined is concat for an array the caller tracks, or frees, itself.
func (w *Weights) joined(xs []*mlx.Array) *mlx.Array {
	out := mlx.Concatenate(xs, 0)
	for _, x := range xs {
		w.untrack(x)
		x.Free()
	}
	return out
}

// concat joins loaded arrays along their first axis into a new loaded
// array, freeing the originals.
func (w *Weights) concat(xs []*mlx.Array) *mlx.Array {
	out := mlx.Concatenate(xs, 0)
	for _, x := range xs {
		w.untrack(x)
		x.Free()
	}
	w.track(out)
	return out
}

func countNonNil(xs []*mlx.Array) int {
	n := 0
	for _, x := range xs {
		if x != nil {
			n++
		}
	}
	return n
}
