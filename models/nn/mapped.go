package nn

import (
	"fmt"

	"hark/mlx"
	"hark/mlx/safetensors"
)

// Expert weights stay in the file. A mixture-of-experts layer reads, per
// token, only the few experts its router chose (GatherMM/GatherQMM read
// just those), so its stacked expert tensors are not copied at load but
// mapped (mlx.MapFile): the pages of an expert enter memory when a token
// first uses it, and a model with 128 experts and top-8 holds in memory
// only the experts its prompts have used, plus everything else. This
// applies where the tensor is used as stored: stacked tensors (mlx-lm's
// switch_mlp, GPT-OSS's) in their file dtype, quantized codes and their
// scales included; per-expert tensors are stacked at load, a copy.

// pather is a Source that can say which file holds a tensor
// (safetensors.Set).
type pather interface {
	Path(name string) (string, error)
}

// mapExperts is true unless the weights were told not to map (NoMap).
func (w *Weights) mapExperts() bool { return !w.noMap }

// NoMap makes the loader copy expert tensors like every other tensor:
// for tests that compare the two, and for sources that are not files.
func (w *Weights) NoMap() { w.noMap = true }

// expertArray is Array for a stacked expert tensor: mapped from the file
// as it is stored when the source and backend allow it, else loaded as
// usual. A non-nil asShape views the file's bytes as dtype as in that
// shape (MXFP4 blocks, bytes in the file, are uint32 words).
func (w *Weights) expertArray(name string, shape []int, as mlx.DType, asShape []int) *mlx.Array {
	if !w.names[name] {
		w.errs = append(w.errs, fmt.Errorf("missing tensor %s", name))
		return nil
	}
	info, err := w.src.Tensor(name)
	if err != nil {
		w.used[name] = true
		w.errs = append(w.errs, fmt.Errorf("tensor %s: %w", name, err))
		return nil
	}
	if !shapeMatches(info.Shape, shape) {
		w.used[name] = true
		w.errs = append(w.errs, fmt.Errorf("tensor %s has shape %v, the config implies %v", name, info.Shape, shape))
		return nil
	}
	dt, err := mlx.ParseDType(string(info.DType))
	if err != nil {
		w.used[name] = true
		w.errs = append(w.errs, fmt.Errorf("tensor %s: unsupported dtype %s", name, info.DType))
		return nil
	}
	to, toShape := dt, info.Shape
	if asShape != nil {
		to, toShape = as, asShape
	}
	if a := w.mapTensor(name, info, to, toShape); a != nil {
		return a
	}
	if asShape != nil {
		return w.bytesAs(name, string(info.DType), shape, as, asShape)
	}
	return w.load(name, shape)
}

// mapTensor maps name's bytes from its file as an array of dtype to and
// shape toShape, or returns nil when the source, the backend or the
// tensor's alignment does not allow it (then the caller copies).
func (w *Weights) mapTensor(name string, info safetensors.Info, to mlx.DType, toShape []int) *mlx.Array {
	p, ok := w.src.(pather)
	if !ok || !w.mapExperts() || mlx.ShapeSize(toShape)*to.Size() != int(info.Size) {
		return nil
	}
	path, err := p.Path(name)
	if err != nil {
		return nil
	}
	a, ok := mlx.MapFile(path, info.Offset, to, toShape...)
	if !ok {
		return nil
	}
	w.used[name] = true
	w.loaded = append(w.loaded, a) // mapped: neither moved nor copied
	w.bytes += info.Size
	if w.mapped == nil {
		w.mapped = map[*mlx.Array]bool{}
	}
	w.mapped[a] = true
	return a
}

// quantArray is Array for the codes, scales and biases of a dense
// quantized matrix. Where they are held in their file dtype they are
// mapped from the file, not copied: Loaded packs most of them into the
// backend's layout, which reads them once and frees them, so the process
// never holds the MLX layout in its own memory beside the packed one (a
// copy of every quantized matrix at the peak of a load, about a third of
// the model's size, and as much load time). A matrix the backend does not
// pack is read in place, from the page cache the system shares.
func (w *Weights) quantArray(name string, shape []int) *mlx.Array {
	if !w.names[name] {
		return w.Array(name, shape...)
	}
	info, err := w.src.Tensor(name)
	if err != nil || !shapeMatches(info.Shape, shape) {
		return w.Array(name, shape...) // reports the problem
	}
	dt, err := mlx.ParseDType(string(info.DType))
	if err != nil || HeldDType(name, dt, info.Shape) != dt {
		return w.Array(name, shape...)
	}
	if a := w.mapTensor(name, info, dt, info.Shape); a != nil {
		return a
	}
	return w.Array(name, shape...)
}

// MappedBytes is the part of Bytes that stays mapped from the files
// (expert tensors, quantized matrices the backend did not repack): memory
// only once used, and shared with the page cache.
func (w *Weights) MappedBytes() int64 {
	var n int64
	for _, a := range w.loaded {
		if w.mapped[a] {
			n += int64(a.Size() * a.DType().Size())
		}
	}
	return n
}

// ExpertArray is Array for a stacked expert tensor that a gather-matmul
// reads as stored (GPT-OSS's float [E, in, out] experts): mapped from the
// file where it can be.
func (w *Weights) ExpertArray(name string, shape ...int) *mlx.Array {
	return w.expertArray(name, shape, 0, nil)
}
