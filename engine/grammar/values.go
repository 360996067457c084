package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Helpers that read schema values.

func typeMatches(types []string, v any) bool {
	t := jsonType(v)
	for _, want := range types {
		if want == t || (want == "number" && t == "integer") {
			return true
		}
	}
	return false
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil && f == math.Trunc(f) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// canonical writes v as compact JSON, as the model must spell it.
func canonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func quote(s string) []byte {
	b, _ := canonical(s)
	return b
}

func count(s map[string]any, k string, def int, path string) (int, error) {
	v, ok := s[k]
	if !ok {
		return def, nil
	}
	num, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("schema %s: %s must be a number", path, k)
	}
	i, err := strconv.ParseInt(string(num), 10, 32)
	if err != nil || i < 0 || i > 1<<20 {
		return 0, fmt.Errorf("schema %s: %s %s must be a whole number in [0, %d]", path, k, num, 1<<20)
	}
	return int(i), nil
}

func keysBut(s map[string]any, keep string) []string {
	var out []string
	for k := range s {
		if k != keep && !annotations[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func typeList(s map[string]any, path string) ([]string, error) {
	t, ok := s["type"]
	if !ok {
		return nil, nil
	}
	var list []string
	switch v := t.(type) {
	case string:
		list = []string{v}
	case []any:
		for _, e := range v {
			str, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("schema %s: type entries must be strings", path)
			}
			list = append(list, str)
		}
		if len(list) == 0 {
			return nil, fmt.Errorf("schema %s: type is an empty list", path)
		}
	default:
		return nil, fmt.Errorf("schema %s: type must be a string or a list of strings", path)
	}
	for _, t := range list {
		switch t {
		case "string", "number", "integer", "boolean", "null", "array", "object":
		default:
			return nil, fmt.Errorf("schema %s: unknown type %q", path, t)
		}
	}
	return list, nil
}

func inferTypes(s map[string]any) []string {
	has := func(m map[string]bool) bool {
		for k := range s {
			if m[k] {
				return true
			}
		}
		return false
	}
	switch {
	case has(objectKeys):
		return []string{"object"}
	case has(arrayKeys):
		return []string{"array"}
	case has(stringKeys):
		return []string{"string"}
	case has(numberKeys):
		return []string{"number"}
	}
	return nil
}
