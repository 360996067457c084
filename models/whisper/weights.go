package whisper

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"hark/mlx"
	"hark/mlx/safetensors"
	"hark/models/nn"
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

// canonicalSource shows a checkpoint under the canonical (mlx-community)
// tensor names, so one graph loads all three naming schemes through
// nn.Weights. Names it does not know keep their own name, so the loader
// reports them as unexpected; the tied proj_out and the alignment-head
// table are hidden (not weights of the graph).
type canonicalSource struct {
	src   safetensors.Source
	names []string
	orig  map[string]string // shown name -> checkpoint name
}

func newCanonicalSource(src safetensors.Source) (*canonicalSource, error) {
	c := &canonicalSource{src: src, orig: map[string]string{}}
	for _, n := range src.Names() {
		if n == "proj_out.weight" || n == "alignment_heads" {
			continue
		}
		shown := n
		if cn, ok := canonicalName(n); ok {
			shown = cn
		}
		if prev, dup := c.orig[shown]; dup {
			return nil, fmt.Errorf("tensors %s and %s are the same weight in two naming schemes", prev, n)
		}
		c.orig[shown] = n
		c.names = append(c.names, shown)
	}
	return c, nil
}

func (c *canonicalSource) Names() []string { return slices.Clone(c.names) }

func (c *canonicalSource) Tensor(name string) (safetensors.Info, error) {
	n, ok := c.orig[name]
	if !ok {
		return safetensors.Info{}, fmt.Errorf("tensor %s: %w", name, safetensors.ErrNotFound)
	}
	return c.src.Tensor(n)
}

func (c *canonicalSource) View(name string) ([]byte, error) {
	n, ok := c.orig[name]
	if !ok {
		return nil, fmt.Errorf("tensor %s: %w", name, safetensors.ErrNotFound)
	}
	return c.src.View(n)
}

// Release passes the loader's Release (nn.Weights) on to a checkpoint
// that has it (safetensors.File and Set).
func (c *canonicalSource) Release(name string) {
	r, ok := c.src.(interface{ Release(string) })
	if n, known := c.orig[name]; ok && known {
		r.Release(n)
	}
}

// conv loads a kernel-3 Conv1d as MLX lays it out, [out, 3, in]. PyTorch
// and HF store [out, in, 3]; mlx-community stores [out, 3, in]. in is
// never 3 in Whisper, so the shape tells the two apart.
func conv(w *nn.Weights, prefix string, in, out int) (wt, b *mlx.Array) {
	wt = w.Array(prefix+".weight", out, -1, -1)
	if wt != nil {
		switch sh := wt.Shape(); {
		case slices.Equal(sh, []int{out, in, 3}):
			wt = w.Replace(wt, mlx.Transpose(wt, 0, 2, 1))
		case !slices.Equal(sh, []int{out, 3, in}):
			w.Failf("tensor %s has shape %v, not a kernel-3 conv from %d to %d channels", prefix+".weight", sh, in, out)
		}
	}
	return wt, w.Array(prefix+".bias", out)
}

// alignmentHeadsTensor reads the [n, 2] integer tensor mlx-community
// checkpoints store as "alignment_heads"; nil when there is none.
func alignmentHeadsTensor(src safetensors.Source) ([][2]int, error) {
	in, err := src.Tensor("alignment_heads")
	if errors.Is(err, safetensors.ErrNotFound) {
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
