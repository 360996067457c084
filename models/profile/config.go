// Package profile reads a model's config.json generically and decides, from
// the families the engine's graph packages register, whether Hark can run
// it. It is deliberately free of engine dependencies so the model library
// and the CLI can classify models without loading any weights.
package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Quant is MLX-style quantization: a default for every quantized module and
// per-module overrides (mlx-lm writes them as nested objects keyed by the
// module path, or as false for a module kept in full precision).
type Quant struct {
	Bits      int    `json:"bits"`
	GroupSize int    `json:"groupSize"`
	Mode      string `json:"mode"` // "affine" when the config names none
	// Method is a transformers quant_method (gptq, awq, bitsandbytes...)
	// when the config uses one instead of MLX quantization.
	Method    string                   `json:"method,omitempty"`
	Overrides map[string]QuantOverride `json:"overrides,omitempty"`
}

// QuantOverride is one module's quantization; Skip means the module is kept
// unquantized.
type QuantOverride struct {
	Bits      int    `json:"bits,omitempty"`
	GroupSize int    `json:"groupSize,omitempty"`
	Mode      string `json:"mode,omitempty"`
	Skip      bool   `json:"skip,omitempty"`
}

// Config is what Hark needs from config.json. Raw keeps the whole decoded
// object so families can check fields this struct does not name.
type Config struct {
	ModelType     string
	Architectures []string
	DType         string // torch_dtype or dtype, e.g. "bfloat16"
	ContextLength int
	Quant         *Quant
	// TextModelType is text_config.model_type for composite models such as
	// Gemma 3, whose top level names the multimodal wrapper.
	TextModelType string
	Raw           map[string]any
}

// MaxConfigBytes bounds config.json: real ones are a few KB, and a huge
// file is a mistake (or an attack) that must not exhaust memory.
const MaxConfigBytes = 4 << 20

// contextKeys are the names families use for the longest sequence, in the
// order they are preferred.
var contextKeys = []string{"max_position_embeddings", "max_target_positions", "n_ctx", "max_sequence_length", "seq_length", "n_positions", "model_max_length", "sliding_window_size"}

// Parse decodes config.json bytes. It fails only when the bytes are not a
// JSON object; odd field types are ignored field by field.
func Parse(data []byte) (*Config, error) {
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("config.json is %d bytes, over the %d-byte limit", len(data), MaxConfigBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("config.json is not valid JSON: %w", err)
	}
	if raw == nil {
		return nil, errors.New("config.json is not a JSON object")
	}
	c := &Config{Raw: raw}
	c.ModelType = str(raw["model_type"])
	c.Architectures = strs(raw["architectures"])
	c.DType = str(raw["torch_dtype"])
	if c.DType == "" {
		c.DType = str(raw["dtype"])
	}
	text, _ := raw["text_config"].(map[string]any)
	if text != nil {
		c.TextModelType = str(text["model_type"])
		if c.DType == "" {
			c.DType = str(text["torch_dtype"])
			if c.DType == "" {
				c.DType = str(text["dtype"])
			}
		}
	}
	c.ContextLength = contextLength(raw)
	if c.ContextLength == 0 && text != nil {
		c.ContextLength = contextLength(text)
	}
	c.Quant = parseQuant(raw)
	return c, nil
}

func contextLength(m map[string]any) int {
	for _, k := range contextKeys {
		if n := num(m[k]); n > 0 {
			return n
		}
	}
	return 0
}

// parseQuant prefers mlx-lm's "quantization" and falls back to
// "quantization_config", which mlx-lm also writes and transformers uses for
// its own methods.
func parseQuant(raw map[string]any) *Quant {
	q, _ := raw["quantization"].(map[string]any)
	if q == nil {
		q, _ = raw["quantization_config"].(map[string]any)
	}
	if q == nil {
		return nil
	}
	out := &Quant{Bits: num(q["bits"]), GroupSize: num(q["group_size"]), Mode: str(q["mode"]), Method: str(q["quant_method"])}
	if out.Method == "" && out.Mode == "" {
		out.Mode = "affine"
	}
	for k, v := range q {
		switch o := v.(type) {
		case map[string]any:
			out.addOverride(k, QuantOverride{Bits: num(o["bits"]), GroupSize: num(o["group_size"]), Mode: str(o["mode"])})
		case bool:
			if !o {
				out.addOverride(k, QuantOverride{Skip: true})
			}
		}
	}
	return out
}

func (q *Quant) addOverride(k string, o QuantOverride) {
	if q.Overrides == nil {
		q.Overrides = map[string]QuantOverride{}
	}
	q.Overrides[k] = o
}

// String is a short label like "4-bit g64" or "4-bit g64 (+3 overrides)".
func (q *Quant) String() string {
	if q == nil {
		return ""
	}
	if q.Method != "" && q.Bits == 0 {
		return q.Method
	}
	s := fmt.Sprintf("%d-bit g%d", q.Bits, q.GroupSize)
	if q.Mode != "" && q.Mode != "affine" {
		s += " " + q.Mode
	}
	if q.Method != "" {
		s += " " + q.Method
	}
	if n := len(q.Overrides); n > 0 {
		s += fmt.Sprintf(" (+%d overrides)", n)
	}
	return s
}

// OverrideKeys returns the override module paths sorted.
func (q *Quant) OverrideKeys() []string {
	keys := make([]string, 0, len(q.Overrides))
	for k := range q.Overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func str(v any) string {
	s, _ := v.(string)
	return strings.TrimSpace(s)
}

func strs(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s := str(e); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// num reads a non-negative integer that fits an int; anything else is 0.
func num(v any) int {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	i, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil || f != float64(int64(f)) {
			return 0
		}
		i = int64(f)
	}
	if i < 0 || i > 1<<40 {
		return 0
	}
	return int(i)
}
