package library

import (
	"strings"

	"hark/mlx/safetensors"
)

// tensorStats adds up a header: the parameter count and the dominant float
// dtype. MLX-quantized weights are counted as the parameters they stand
// for: a packed U32 "x.weight" next to "x.scales" holds 32/bits values per
// element, and the scales and biases are bookkeeping, not parameters.
type tensorStats struct {
	params int64
	dtypes map[string]int64 // elements per dtype
}

func (s *tensorStats) add(h []safetensors.Info, bitsFor func(module string) int) {
	if s.dtypes == nil {
		s.dtypes = map[string]int64{}
	}
	names := make(map[string]bool, len(h))
	for _, t := range h {
		names[t.Name] = true
	}
	for _, t := range h {
		// The header reader bounds each tensor's bytes to the file, so
		// the count cannot overflow; 32/bits of it still could.
		n := t.NumElements()
		module, field := splitTensorName(t.Name)
		quantized := names[module+".scales"]
		if quantized && (field == "scales" || field == "biases") {
			continue
		}
		if quantized && field == "weight" && t.DType == "U32" {
			if bits := bitsFor(module); bits > 0 {
				n = min(n, 1<<57) * 32 / int64(bits)
			}
			s.params += n
			continue
		}
		s.params += n
		s.dtypes[string(t.DType)] += n
	}
}

func splitTensorName(name string) (module, field string) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return "", name
	}
	return name[:i], name[i+1:]
}

// dtype names the float dtype most parameters use, in config spelling.
func (s *tensorStats) dtype() string {
	names := map[string]string{"F32": "float32", "F16": "float16", "BF16": "bfloat16", "F64": "float64", "F8_E4M3": "float8_e4m3", "F8_E5M2": "float8_e5m2"}
	best, bestN := "", int64(-1)
	for d, n := range s.dtypes {
		name, ok := names[d]
		if !ok {
			continue
		}
		if n > bestN || n == bestN && name < best {
			best, bestN = name, n
		}
	}
	return best
}
