package nn

import (
	"fmt"

	"hark/mlx"
	"hark/mlx/safetensors"
)

// Dense quantized matrices that the backend packs into its own layout are
// packed straight from the checkpoint's bytes (mlx.NewQuantMatrixBytes):
// the loader never copies their codes, scales and biases into MLX's
// arrays first. Mapping those arrays from the file instead (mapTensor)
// works only for tensors aligned for their dtype and scales the loader
// holds as stored, float32; mlx-lm writes its safetensors header unpadded
// (so a tensor starts at any byte) with bfloat16 scales, and that copy,
// with the widening of the scales, took about a third of the load.

// quantBytes returns the affine-quantized matrix at path as one that
// stays in the checkpoint's bytes until Loaded (or a fusion) packs it, or
// nil when the tensors are not a dense matrix [rows, cols] in a format the
// backend packs from bytes; the caller then loads arrays as usual.
func (w *Weights) quantBytes(path string, rows, cols int) *mlx.QuantMatrix {
	mode, group, bits, err := w.quantFor(path)
	if err != nil || mode != "affine" || cols%group != 0 || cols*bits%32 != 0 {
		return nil // quantTensors reports what is wrong
	}
	wi, ok := w.tensorInfo(path+".weight", safetensors.U32, rows, cols*bits/32)
	if !ok {
		return nil
	}
	si, ok := w.tensorInfo(path+".scales", "", rows, cols/group)
	if !ok {
		return nil
	}
	bi, ok := w.tensorInfo(path+".biases", si.DType, rows, cols/group)
	if !ok {
		return nil
	}
	scaleType, err := mlx.ParseDType(string(si.DType))
	if err != nil || !scaleType.IsFloat() {
		return nil
	}
	var raw [3][]byte
	for i, in := range []safetensors.Info{wi, si, bi} {
		if raw[i], err = w.src.View(in.Name); err != nil {
			return nil
		}
	}
	m, err := mlx.NewQuantMatrixBytes(mlx.QuantBytes{Weight: raw[0], Scales: raw[1], Biases: raw[2], ScaleType: scaleType,
		Rows: rows, Cols: cols, GroupSize: group, Bits: bits})
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("%s: %w", path, err))
	}
	if m == nil {
		return nil
	}
	w.used[wi.Name], w.used[si.Name], w.used[bi.Name] = true, true, true
	if w.fromBytes == nil {
		w.fromBytes = map[*mlx.QuantMatrix]string{}
	}
	w.fromBytes[m] = path
	return m
}

// tensorInfo is name's header entry when it is there with shape [rows,
// cols] and dtype dt (any dtype when dt is empty).
func (w *Weights) tensorInfo(name string, dt safetensors.DType, rows, cols int) (safetensors.Info, bool) {
	if !w.names[name] {
		return safetensors.Info{}, false
	}
	in, err := w.src.Tensor(name)
	if err != nil || dt != "" && in.DType != dt || len(in.Shape) != 2 || in.Shape[0] != rows || in.Shape[1] != cols {
		return safetensors.Info{}, false
	}
	in.Name = name
	return in, true
}

// doneWithBytes is called once m no longer reads the checkpoint's bytes
// (packed, or copied into arrays): their pages need not stay resident
// through the file's mapping beside the model's own copy, so the peak
// memory of a load stays at about one copy of the weights.
func (w *Weights) doneWithBytes(m *mlx.QuantMatrix) {
	path, ok := w.fromBytes[m]
	if !ok {
		return
	}
	delete(w.fromBytes, m)
	if r, ok := w.src.(releaser); ok {
		for _, s := range []string{".weight", ".scales", ".biases"} {
			r.Release(path + s)
		}
	}
}

// CopiedBytes is how many bytes of checkpoint tensors the loader copied
// into memory as they are stored (everything but the mapped tensors and
// the matrices packed from the checkpoint's bytes).
func (w *Weights) CopiedBytes() int64 { return w.copied }
