package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"

	"hark/mlx/safetensors"
)

// A checkpoint with NaN or Inf in it (a bad conversion, an fp16 overflow)
// does not fail: it generates garbage, or an empty reply of token 0 over
// and over. Two checks turn that into a clear error naming the model: a
// quick look at the weights at load, and a look at every step's logits.

// tensorSource is the part of safetensors.Set the weight scan reads.
type tensorSource interface {
	Names() []string
	Tensor(name string) (safetensors.Info, error)
	View(name string) ([]byte, error)
}

// scanChunk is how many bytes of each tensor's start, middle and end the
// load-time scan reads: a few MB for a large model, so loading stays fast;
// the logits check catches what the samples miss.
const scanChunk = 16 << 10

// scanWeights reports the first float tensor whose sampled values hold
// NaN or Inf.
func scanWeights(src tensorSource, dir string) error {
	for _, name := range src.Names() {
		info, err := src.Tensor(name)
		if err != nil {
			return err
		}
		size := info.DType.Size()
		bad := nonFiniteFunc(info.DType)
		if bad == nil {
			continue // integers and packed quantized weights
		}
		data, err := src.View(name)
		if err != nil {
			return err
		}
		for _, start := range []int{0, len(data)/2 - scanChunk/2, len(data) - scanChunk} {
			start = max(start, 0) / size * size
			end := min(start+scanChunk, len(data))
			for i := start; i+size <= end; i += size {
				if bad(data[i : i+size]) {
					return fmt.Errorf("model %s: the weights contain NaN or Inf (tensor %s, element %d)", filepath.Base(dir), name, i/size)
				}
			}
		}
		// The sampled pages (and those read around them) need not stay
		// resident through the source's mapping while the model loads.
		if r, ok := src.(interface{ Release(name string) }); ok {
			r.Release(name)
		}
	}
	return nil
}

// nonFiniteFunc tests one little-endian element of dt for NaN/Inf (all
// exponent bits set), or is nil for a dtype that cannot hold them.
func nonFiniteFunc(dt safetensors.DType) func([]byte) bool {
	switch dt {
	case safetensors.F32:
		return func(b []byte) bool { return binary.LittleEndian.Uint32(b)&0x7f800000 == 0x7f800000 }
	case safetensors.F64:
		return func(b []byte) bool { return binary.LittleEndian.Uint64(b)&0x7ff0000000000000 == 0x7ff0000000000000 }
	case safetensors.F16:
		return func(b []byte) bool { return binary.LittleEndian.Uint16(b)&0x7c00 == 0x7c00 }
	case safetensors.BF16:
		return func(b []byte) bool { return binary.LittleEndian.Uint16(b)&0x7f80 == 0x7f80 }
	}
	return nil
}

// checkLogits fails generation when the model's output is not numbers.
func (g *generation) checkLogits(logits []float32, step int) error {
	for _, v := range logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("model %s: the weights contain NaN or Inf, or values too large to compute with: its logits are %v at token %d", filepath.Base(g.e.Dir), v, step)
		}
	}
	return nil
}
