// Package nn holds the building blocks of Hark's LLM graphs: linear layers
// (dense and MLX-quantized), embeddings, norms, rotary embeddings, attention
// and KV caches, plus the loader that fills them from safetensors files
// under their Hugging Face / MLX tensor names.
package nn

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"hark/mlx"
	"hark/mlx/safetensors"
	"hark/models/profile"
)

// Source is where Weights reads tensors from; safetensors.File and
// safetensors.Set both satisfy it.
type Source interface {
	Names() []string
	Tensor(name string) (safetensors.Info, error)
	View(name string) ([]byte, error)
}

// Weights hands tensors to the modules that claim them by name and keeps
// score, so a checkpoint that does not match the graph fails with a list of
// what is missing, misshapen or left over rather than a panic deep inside a
// forward pass. Errors accumulate: a model constructor claims every tensor
// and checks Err once at the end.
type Weights struct {
	src    Source
	quant  *profile.Quant
	names  map[string]bool
	used   map[string]bool
	ignore []string
	errs   []error
	loaded []*mlx.Array
	bytes  int64
	// quants are the quantized matrices of the graph, which Loaded packs
	// for the backend's decode kernel.
	quants []*QuantWeight
	packed int64               // bytes of the packed matrices
	mapped map[*mlx.Array]bool // the tensors mapped from their files
	noMap  bool
	// fromBytes names the matrices still in the checkpoint's bytes
	// (quantBytes) by their module path, whose file pages are released
	// once they are packed.
	fromBytes map[*mlx.QuantMatrix]string
	copied    int64 // bytes of checkpoint tensors copied (CopiedBytes)
}

// NewWeights reads from src. quant is the config's MLX quantization (nil
// for none). Tensors are held in the dtypes HeldDType gives.
func NewWeights(src Source, quant *profile.Quant) *Weights {
	w := &Weights{src: src, quant: quant, names: map[string]bool{}, used: map[string]bool{}}
	for _, n := range src.Names() {
		w.names[n] = true
	}
	return w
}

// Has reports whether the checkpoint holds name.
func (w *Weights) Has(name string) bool { return w.names[name] }

// Shape is the shape the checkpoint gives name, without loading it, or
// nil when it has no such tensor: for graphs whose reading depends on a
// tensor's layout.
func (w *Weights) Shape(name string) []int {
	if !w.names[name] {
		return nil
	}
	info, err := w.src.Tensor(name)
	if err != nil {
		return nil
	}
	return info.Shape
}

// Ignore marks tensors whose names contain any of parts as expected
// leftovers (rotary inv_freq buffers, a vision tower the text graph does
// not use).
func (w *Weights) Ignore(parts ...string) { w.ignore = append(w.ignore, parts...) }

// Failf records a problem found by a model constructor.
func (w *Weights) Failf(format string, a ...any) {
	w.errs = append(w.errs, fmt.Errorf(format, a...))
}

// Array loads name, checks its shape when shape is given (a -1 entry
// matches any size) and returns it, or records an error and returns nil.
func (w *Weights) Array(name string, shape ...int) *mlx.Array {
	if !w.names[name] {
		w.errs = append(w.errs, fmt.Errorf("missing tensor %s", name))
		return nil
	}
	return w.load(name, shape)
}

// Optional is Array for a tensor that may be absent (a bias); absent gives
// nil and no error.
func (w *Weights) Optional(name string, shape ...int) *mlx.Array {
	if !w.names[name] {
		return nil
	}
	return w.load(name, shape)
}

func (w *Weights) load(name string, shape []int) *mlx.Array {
	w.used[name] = true
	info, err := w.src.Tensor(name)
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("tensor %s: %w", name, err))
		return nil
	}
	if shape != nil && !shapeMatches(info.Shape, shape) {
		w.errs = append(w.errs, fmt.Errorf("tensor %s has shape %v, the config implies %v", name, info.Shape, shape))
		return nil
	}
	dt, err := mlx.ParseDType(string(info.DType))
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("tensor %s: unsupported dtype %s", name, info.DType))
		return nil
	}
	raw, err := w.src.View(name)
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("tensor %s: %w", name, err))
		return nil
	}
	// Straight into resident memory: the checkpoint never passes through
	// the heap (Loaded would otherwise copy it off again).
	a, err := mlx.ResidentFromBytes(raw, dt, info.Shape...)
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("tensor %s: %w", name, err))
		return nil
	}
	w.copied += int64(len(raw))
	// The copy is made: the file's pages of this tensor need not stay
	// resident too.
	if r, ok := w.src.(releaser); ok {
		r.Release(name)
	}
	if held := HeldDType(name, dt, info.Shape); held != dt {
		c := mlx.AsType(a, held)
		a.Free()
		a = c
	}
	w.track(a)
	return a
}

// bytesAs loads name, stored as dtype file with shape fileShape, as an
// array of dtype dt and shape shape over the same little-endian bytes
// (MXFP4 blocks, bytes in the file, are uint32 words to the kernels).
func (w *Weights) bytesAs(name string, file string, fileShape []int, dt mlx.DType, shape []int) *mlx.Array {
	if !w.names[name] {
		w.errs = append(w.errs, fmt.Errorf("missing tensor %s", name))
		return nil
	}
	w.used[name] = true
	info, err := w.src.Tensor(name)
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("tensor %s: %w", name, err))
		return nil
	}
	if string(info.DType) != file || !shapeMatches(info.Shape, fileShape) {
		w.errs = append(w.errs, fmt.Errorf("tensor %s is %s %v, the config implies %s %v", name, info.DType, info.Shape, file, fileShape))
		return nil
	}
	raw, err := w.src.View(name)
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("tensor %s: %w", name, err))
		return nil
	}
	a, err := mlx.ResidentFromBytes(raw, dt, shape...)
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("tensor %s: %w", name, err))
		return nil
	}
	w.copied += int64(len(raw))
	if r, ok := w.src.(releaser); ok {
		r.Release(name)
	}
	w.track(a)
	return a
}

// releaser is a Source that can drop a tensor's file pages from memory
// once it is copied (safetensors.File and Set).
type releaser interface{ Release(name string) }

// HeldDType is the dtype a checkpoint tensor of dtype dt is held in once
// loaded, on every backend:
//   - float16 and bfloat16 matrices (2 or more axes: linear weights,
//     embedding tables, convolution kernels) keep their file dtype; the
//     backend widens them inside its kernels, so a bf16 model takes the
//     memory of its file;
//   - other floats become float32: vectors (norm weights and biases, a
//     fraction of a percent of a model, read by elementwise ops in float32
//     at every call, and Gemma's 1+w fold stays exactly today's float32
//     value) and the scales and biases of quantized matrices (the
//     quantized kernels read them as float32);
//   - integers keep their dtype.
//
// The engine's memory estimate uses the same rule.
func HeldDType(name string, dt mlx.DType, shape []int) mlx.DType {
	if !dt.IsFloat() || dt == mlx.Float32 {
		return dt
	}
	half := dt == mlx.Float16 || dt == mlx.BFloat16
	if half && len(shape) >= 2 && !strings.HasSuffix(name, ".scales") && !strings.HasSuffix(name, ".biases") {
		return dt
	}
	return mlx.Float32
}

// track records an array the model will own (see Loaded).
// It moves a off the heap at once (a no-op for the arrays load made
// resident): a derived array (a fused projection, a transposed kernel)
// left on the heap until Loaded would hold the heap at the size of every
// fused matrix together, pages Go keeps long after they are freed.
func (w *Weights) track(a *mlx.Array) {
	mlx.Resident(a)
	w.loaded = append(w.loaded, a)
	w.bytes += int64(a.Size() * a.DType().Size())
}

// Replace swaps a loaded array for a derived one (e.g. Gemma's 1+w norm
// weight), freeing the original.
func (w *Weights) Replace(old, nu *mlx.Array) *mlx.Array {
	w.untrack(old)
	old.Free()
	w.track(nu)
	return nu
}

// untrack forgets a loaded array the caller is about to free.
func (w *Weights) untrack(old *mlx.Array) {
	for i, a := range w.loaded {
		if a == old {
			w.bytes -= int64(a.Size() * a.DType().Size())
			w.loaded = append(w.loaded[:i], w.loaded[i+1:]...)
			return
		}
	}
}

func shapeMatches(got []int, want []int) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if want[i] >= 0 && got[i] != want[i] {
			return false
		}
	}
	return true
}

// Err reports every missing or misshapen tensor and every tensor in the
// checkpoint no module claimed, or nil when the checkpoint fits the graph.
func (w *Weights) Err() error {
	var extra []string
	for n := range w.names {
		if w.used[n] || w.ignored(n) {
			continue
		}
		extra = append(extra, n)
	}
	sort.Strings(extra)
	errs := append([]error(nil), w.errs...)
	if len(extra) > 0 {
		show := extra
		if len(show) > 10 {
			show = show[:10]
		}
		more := ""
		if len(extra) > len(show) {
			more = fmt.Sprintf(" and %d more", len(extra)-len(show))
		}
		errs = append(errs, fmt.Errorf("unexpected tensors %s%s", strings.Join(show, ", "), more))
	}
	if len(errs) > 12 {
		errs = append(errs[:12], fmt.Errorf("... %d more problems", len(errs)-12))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("weights do not match the model: %w", errors.Join(errs...))
}

func (w *Weights) ignored(name string) bool {
	for _, p := range w.ignore {
		if strings.Contains(name, p) {
			return true
		}
	}
	return false
}

// Loaded returns every array loaded so far, moved off the garbage-collected
// heap (mlx.Resident); the model owns them and frees them on Close. Moving
// them here, once construction is done, skips the arrays that fusing or
// replacing freed on the way. Quantized matrices the backend has a decode
// layout for are packed into it first (mlx.QuantMatrix.Pack), replacing
// their MLX arrays.
func (w *Weights) Loaded() []*mlx.Array {
	for _, q := range w.quants {
		w.pack(q)
	}
	w.quants = nil
	for _, a := range w.loaded {
		mlx.Resident(a)
	}
	return append([]*mlx.Array(nil), w.loaded...)
}

// pack moves q into its backend's own layout when it has one. A matrix
// still in the checkpoint's bytes packs from them, or (should the backend
// decline) is copied into arrays the model then owns.
func (w *Weights) pack(q *QuantWeight) {
	if q.M == nil || q.M.Packed() {
		return // a tensor failed to load (already reported), or fused packed
	}
	fromBytes := q.M.FromBytes()
	replaced := q.M.Pack()
	for _, a := range replaced {
		w.untrack(a)
		a.Free()
	}
	if fromBytes || replaced != nil {
		for _, a := range q.M.Arrays() {
			w.track(a)
			if q.M.Packed() {
				w.packed += int64(a.Size() * a.DType().Size())
			}
		}
	}
	w.doneWithBytes(q.M)
}

// forgetQuant drops q from the matrices Loaded packs (a part fused into
// another matrix).
func (w *Weights) forgetQuant(q *QuantWeight) {
	for i, x := range w.quants {
		if x == q {
			w.quants = append(w.quants[:i], w.quants[i+1:]...)
			return
		}
	}
}

// Discard frees every array loaded so far, for a model whose construction
// failed (Loaded would first move them all off the heap for nothing).
func (w *Weights) Discard() {
	mlx.Free(w.loaded...)
	w.loaded = nil
}

// Bytes is the memory held by the loaded arrays: what one forward pass over
// every token streams at least once.
func (w *Weights) Bytes() int64 { return w.bytes }

// PackedBytes is the part of Bytes that Loaded packed into the backend's
// decode layout.
func (w *Weights) PackedBytes() int64 { return w.packed }

// quantFor returns the mode ("affine" or "mxfp4"), group size and bits
// of the quantized module at path (its tensor name prefix, which is also
// mlx-lm's module path and the key of per-module overrides).
func (w *Weights) quantFor(path string) (mode string, group, bits int, err error) {
	q := w.quant
	if q == nil {
		return "", 0, 0, fmt.Errorf("%s is quantized (has .scales) but config.json has no quantization", path)
	}
	mode, group, bits = q.Mode, q.GroupSize, q.Bits
	if o, ok := q.Overrides[path]; ok && !o.Skip {
		if o.Mode != "" {
			mode = o.Mode
		}
		if o.Bits != 0 {
			bits = o.Bits
		}
		if o.GroupSize != 0 {
			group = o.GroupSize
		}
	}
	if mode == "" {
		mode = "affine"
	}
	if err := mlx.CheckQuantMode(mode, group, bits); err != nil {
		return "", 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return mode, group, bits, nil
}

// quantTensors loads the packed weights, scales and (affine only) biases
// of a quantized module at path whose matrices are lead + [rows, cols]:
// path.weight, path.scales and path.biases, the last absent in mxfp4 mode
// whose scales are uint8. Problems are recorded and give ok=false.
// Experts' tensors (experts) are mapped from the file where they can be
// (expertArray), their scales and biases in the file's dtype.
func (w *Weights) quantTensors(path string, lead []int, rows, cols int, experts bool) (wq, scales, biases *mlx.Array, group, bits int, ok bool) {
	mode, group, bits, err := w.quantFor(path)
	if err != nil {
		w.errs = append(w.errs, err)
		w.used[path+".weight"], w.used[path+".scales"], w.used[path+".biases"] = true, true, true
		return nil, nil, nil, 0, 0, false
	}
	if cols%group != 0 || (cols*bits)%32 != 0 {
		w.errs = append(w.errs, fmt.Errorf("%s: input size %d does not fit %d-bit groups of %d", path, cols, bits, group))
		return nil, nil, nil, 0, 0, false
	}
	shape := func(last int) []int { return append(append(append([]int(nil), lead...), rows), last) }
	get := func(name string, shape ...int) *mlx.Array {
		if experts {
			return w.expertArray(name, shape, 0, nil)
		}
		return w.quantArray(name, shape)
	}
	wq = get(path+".weight", shape(cols*bits/32)...)
	scales = get(path+".scales", shape(cols/group)...)
	if mode == "mxfp4" {
		if w.names[path+".biases"] {
			w.Failf("%s: mxfp4 quantization has no biases, but %s.biases is there", path, path)
			w.used[path+".biases"] = true
			return nil, nil, nil, 0, 0, false
		}
		if wq == nil || scales == nil {
			return nil, nil, nil, 0, 0, false
		}
		if wq.DType() != mlx.Uint32 || scales.DType() != mlx.Uint8 {
			w.Failf("%s: mxfp4 weights must be uint32 with uint8 scales, got %v and %v", path, wq.DType(), scales.DType())
			return nil, nil, nil, 0, 0, false
		}
		return wq, scales, nil, group, bits, true
	}
	biases = get(path+".biases", shape(cols/group)...)
	if wq == nil || scales == nil || biases == nil {
		return nil, nil, nil, 0, 0, false // reported; the loaded parts are freed with the rest
	}
	if !scales.DType().IsFloat() || biases.DType() != scales.DType() {
		w.errs = append(w.errs, fmt.Errorf("%s: scales %v and biases %v must be floats of one dtype", path, scales.DType(), biases.DType()))
		return nil, nil, nil, 0, 0, false
	}
	return wq, scales, biases, group, bits, true
}

// quantized loads path.weight/.scales/.biases for a quantized [rows, cols]
// matrix, or returns ok=false when the module is stored unquantized. With
// fromBytes the matrix may stay in the checkpoint's bytes until Loaded
// packs it (quantBytes): for matrices that Loaded or a fusion packs.
func (w *Weights) quantized(path string, rows, cols int, fromBytes bool) (q QuantWeight, ok bool) {
	if !w.names[path+".scales"] {
		return QuantWeight{}, false
	}
	if fromBytes {
		if m := w.quantBytes(path, rows, cols); m != nil {
			return QuantWeight{M: m}, true
		}
	}
	wq, scales, biases, group, bits, good := w.quantTensors(path, nil, rows, cols, false)
	if !good {
		return QuantWeight{}, true
	}
	return QuantWeight{M: mlx.NewQuantMatrix(wq, scales, biases, group, bits)}, true
}
