package whisper

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"hark/mlx"
	"hark/mlx/safetensors"
)

// openWeights opens a model folder's safetensors: a sharded index or
// model.safetensors (Hugging Face), or weights.safetensors (mlx-community).
func openWeights(dir string) (safetensors.Source, error) {
	if _, err := os.Stat(filepath.Join(dir, safetensors.IndexName)); err == nil {
		return safetensors.OpenIndex(dir)
	}
	for _, name := range []string{"model.safetensors", "weights.safetensors"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return safetensors.Open(p)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "weights.npz")); err == nil {
		return nil, fmt.Errorf("%s: weights.npz checkpoints are not supported; convert to safetensors", dir)
	}
	return nil, fmt.Errorf("%s: no model.safetensors, weights.safetensors or %s", dir, safetensors.IndexName)
}

// weights resolves canonical tensor names to the checkpoint's own names and
// turns tensors into arrays. Float tensors are converted to float32: the
// CPU backend computes in float32 anyway, so this costs memory only.
type weights struct {
	src   safetensors.Source
	names map[string]string // canonical -> checkpoint name
	quant *QuantSpec
}

func newWeights(src safetensors.Source, quant *QuantSpec) *weights {
	w := &weights{src: src, names: map[string]string{}, quant: quant}
	for _, n := range src.Names() {
		if c, ok := canonicalName(n); ok {
			w.names[c] = n
		}
	}
	return w
}

func (w *weights) has(name string) bool { _, ok := w.names[name]; return ok }

func (w *weights) info(name string) (safetensors.Info, error) {
	n, ok := w.names[name]
	if !ok {
		return safetensors.Info{}, fmt.Errorf("tensor %s: %w", name, safetensors.ErrNotFound)
	}
	return w.src.Tensor(n)
}

// dense loads a float tensor as float32 and checks its shape.
func (w *weights) dense(name string, shape ...int) (*mlx.Array, error) {
	in, err := w.info(name)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(in.Shape, shape) {
		return nil, fmt.Errorf("tensor %s: shape %v, want %v", in.Name, in.Shape, shape)
	}
	data, err := w.src.Float32s(in.Name)
	if err != nil {
		return nil, err
	}
	return mlx.FromSlice(data, shape...), nil
}

// linear loads prefix.weight [out, in] (dense or quantized) and, when bias
// is true, prefix.bias.
func (w *weights) linear(prefix string, in, out int, bias bool) (_ *linear, err error) {
	l := &linear{}
	defer func() {
		if err != nil {
			l.free()
		}
	}()
	wi, err := w.info(prefix + ".weight")
	if err != nil {
		return nil, err
	}
	if wi.DType == safetensors.U32 {
		if err := w.quantized(l, prefix, wi, in, out); err != nil {
			return nil, err
		}
	} else if l.w, err = w.dense(prefix+".weight", out, in); err != nil {
		return nil, err
	}
	if bias {
		if l.bias, err = w.dense(prefix+".bias", out); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// quantized loads an MLX-quantized weight. Bits and group size follow from
// the packed and scales shapes; a config that says otherwise is an error,
// since the packed data would then be misread.
func (w *weights) quantized(l *linear, prefix string, wi safetensors.Info, in, out int) error {
	si, err := w.info(prefix + ".scales")
	if err != nil {
		return fmt.Errorf("quantized %s: %w", prefix, err)
	}
	if len(wi.Shape) != 2 || wi.Shape[0] != out || len(si.Shape) != 2 || si.Shape[0] != out || si.Shape[1] == 0 {
		return fmt.Errorf("quantized %s: weight %v / scales %v do not fit [%d, %d]", prefix, wi.Shape, si.Shape, out, in)
	}
	if (wi.Shape[1]*32)%in != 0 || in%si.Shape[1] != 0 {
		return fmt.Errorf("quantized %s: packed width %d / %d groups do not divide %d columns", prefix, wi.Shape[1], si.Shape[1], in)
	}
	bits, group := wi.Shape[1]*32/in, in/si.Shape[1]
	if w.quant != nil {
		if g, b := w.quant.For(prefix); b != 0 && (g != group || b != bits) {
			return fmt.Errorf("quantized %s: config says %d-bit group %d, tensors are %d-bit group %d", prefix, b, g, bits, group)
		}
	}
	if err := mlx.CheckQuantParams(group, bits); err != nil {
		return fmt.Errorf("quantized %s: %w", prefix, err)
	}
	raw, err := w.src.Bytes(wi.Name)
	if err != nil {
		return err
	}
	if l.wq, err = mlx.FromBytes(raw, mlx.Uint32, wi.Shape...); err != nil {
		return err
	}
	l.groupSize, l.bits = group, bits
	if l.scales, err = w.dense(prefix+".scales", si.Shape...); err != nil {
		return err
	}
	l.biases, err = w.dense(prefix+".biases", si.Shape...)
	return err
}

func (w *weights) layerNorm(prefix string, d int, eps float32) (n *layerNorm, err error) {
	n = &layerNorm{eps: eps}
	if n.w, err = w.dense(prefix+".weight", d); err != nil {
		return nil, err
	}
	if n.b, err = w.dense(prefix+".bias", d); err != nil {
		n.w.Free()
		return nil, err
	}
	return n, nil
}

// conv loads a Conv1d weight in MLX layout [out, 3, in]. PyTorch and HF
// store [out, in, 3]; mlx-community stores [out, 3, in]. in is never 3 for
// Whisper, so the shape tells the two apart.
func (w *weights) conv(prefix string, in, out int) (wt, b *mlx.Array, err error) {
	wi, err := w.info(prefix + ".weight")
	if err != nil {
		return nil, nil, err
	}
	switch {
	case slices.Equal(wi.Shape, []int{out, in, 3}):
		t, err := w.dense(prefix+".weight", out, in, 3)
		if err != nil {
			return nil, nil, err
		}
		wt = mlx.Transpose(t, 0, 2, 1)
		t.Free()
	case slices.Equal(wi.Shape, []int{out, 3, in}):
		if wt, err = w.dense(prefix+".weight", out, 3, in); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, fmt.Errorf("tensor %s: shape %v is not a kernel-3 conv from %d to %d channels", wi.Name, wi.Shape, in, out)
	}
	if b, err = w.dense(prefix+".bias", out); err != nil {
		wt.Free()
		return nil, nil, err
	}
	return wt, b, nil
}

// alignmentHeads reads the [n, 2] integer tensor mlx-community checkpoints
// store as "alignment_heads"; nil when there is none.
func alignmentHeadsTensor(src safetensors.Source) ([][2]int, error) {
	in, err := src.Tensor("alignment_heads")
	if errors.Is(err, safetensors.ErrNotFound) || (err != nil && strings.Contains(err.Error(), "not found")) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(in.Shape) != 2 || in.Shape[1] != 2 {
		return nil, fmt.Errorf("alignment_heads: shape %v, want [n, 2]", in.Shape)
	}
	raw, err := src.Bytes(in.Name)
	if err != nil {
		return nil, err
	}
	var size int
	switch in.DType {
	case safetensors.I64:
		size = 8
	case safetensors.I32:
		size = 4
	default:
		return nil, fmt.Errorf("alignment_heads: dtype %s", in.DType)
	}
	out := make([][2]int, in.Shape[0])
	for i := range out {
		for j := 0; j < 2; j++ {
			off := (i*2 + j) * size
			if size == 8 {
				out[i][j] = int(int64(binary.LittleEndian.Uint64(raw[off:])))
			} else {
				out[i][j] = int(int32(binary.LittleEndian.Uint32(raw[off:])))
			}
		}
	}
	return out, nil
}
