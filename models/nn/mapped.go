package nn

import (
	"fmt"

	"hark/mlx"
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
	if p, ok := w.src.(pather); ok && w.mapExperts() && mlx.ShapeSize(toShape)*to.Size() == int(info.Size) {
		if path, err := p.Path(name); err == nil {
			if a, ok := mlx.MapFile(path, info.Offset, to, toShape...); ok {
				w.used[name] = true
				w.loaded = append(w.loaded, a) // mapped: neither moved nor copied
				w.bytes += info.Size
				w.mapped += info.Size
				return a
			}
		}
	}
	if asShape != nil {
		return w.bytesAs(name, string(info.DType), shape, as, asShape)
	}
	return w.load(name, shape)
}

// MappedBytes is the part of Bytes that stays mapped from the files
// (expert tensors): memory only once used.
func (w *Weights) MappedBytes() int64 { return w.mapped }

// ExpertArray is Array for a stacked expert tensor that a gather-matmul
// reads as stored (GPT-OSS's float [E, in, out] experts): mapped from the
// file where it can be.
func (w *Weights) ExpertArray(name string, shape ...int) *mlx.Array {
	return w.expertArray(name, shape, 0, nil)
}
