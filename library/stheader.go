package library

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxSTHeader bounds a safetensors header read: real headers are a few MB
// at most, so a larger length means a corrupt or foreign file.
const maxSTHeader = 64 << 20

// stTensor is one tensor declaration of a safetensors header.
type stTensor struct {
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

// readSTHeader reads only the JSON header of a safetensors file: never the
// tensor data, so counting the parameters of a 100 GB model reads MBs.
func readSTHeader(path string) (map[string]stTensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var lenBuf [8]byte
	if _, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("%s: too short for a safetensors header", path)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > maxSTHeader || n > uint64(st.Size()-8) {
		return nil, fmt.Errorf("%s: safetensors header length %d is impossible for a %d-byte file", path, n, st.Size())
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, fmt.Errorf("%s: reading safetensors header: %w", path, err)
	}
	return parseSTHeader(buf)
}

// parseSTHeader decodes header JSON, skipping __metadata__ and rejecting
// negative dimensions.
func parseSTHeader(js []byte) (map[string]stTensor, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(js, &raw); err != nil {
		return nil, fmt.Errorf("safetensors header is not a JSON object: %w", err)
	}
	out := make(map[string]stTensor, len(raw))
	for name, r := range raw {
		if name == "__metadata__" {
			continue
		}
		var t stTensor
		if err := json.Unmarshal(r, &t); err != nil {
			return nil, fmt.Errorf("safetensors tensor %q: %w", name, err)
		}
		for _, d := range t.Shape {
			if d < 0 {
				return nil, fmt.Errorf("safetensors tensor %q: negative dimension", name)
			}
		}
		out[name] = t
	}
	return out, nil
}

// tensorStats adds up a header: the parameter count and the dominant float
// dtype. MLX-quantized weights are counted as the parameters they stand
// for: a packed U32 "x.weight" next to "x.scales" holds 32/bits values per
// element, and the scales and biases are bookkeeping, not parameters.
type tensorStats struct {
	params int64
	dtypes map[string]int64 // elements per dtype
}

func (s *tensorStats) add(h map[string]stTensor, bitsFor func(module string) int) {
	if s.dtypes == nil {
		s.dtypes = map[string]int64{}
	}
	for name, t := range h {
		n := int64(1)
		for _, d := range t.Shape {
			if d != 0 && n > (1<<62)/d {
				n = 1 << 62 // absurd shape: saturate instead of overflowing
				break
			}
			n *= d
		}
		module, field := splitTensorName(name)
		_, quantized := h[module+".scales"]
		if quantized && (field == "scales" || field == "biases") {
			continue
		}
		if quantized && field == "weight" && t.DType == "U32" {
			if bits := bitsFor(module); bits > 0 {
				n = n * 32 / int64(bits)
			}
			s.params += n
			continue
		}
		s.params += n
		s.dtypes[t.DType] += n
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
