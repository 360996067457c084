package chattemplate

import (
	"encoding/json"
	"reflect"
	"sort"

	"github.com/ardanlabs/jinja"
)

// messageValue converts a message, putting role and content first: Go maps
// have no order, and these two are what a template would list first.
func messageValue(m Message) jinja.Value {
	d := jinja.NewDict()
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "role" && k != "content" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range append([]string{"role", "content"}, keys...) {
		if v, ok := m[k]; ok {
			d.AsDict().Set(k, toValue(v))
		}
	}
	return d
}

// toValue converts JSON-like Go values into engine values. Ordered *Object
// keeps its order; plain maps are sorted; anything else (structs, typed
// slices) goes through encoding/json, which keeps struct field order.
func toValue(v any) jinja.Value {
	switch x := v.(type) {
	case nil:
		return jinja.None()
	case jinja.Value:
		return x
	case *Object:
		d := jinja.NewDict()
		for _, k := range x.keys {
			d.AsDict().Set(k, toValue(x.vals[k]))
		}
		return d
	case Message:
		return messageValue(x)
	case map[string]any:
		d := jinja.NewDict()
		for _, k := range sortedKeys(x) {
			d.AsDict().Set(k, toValue(x[k]))
		}
		return d
	case []any:
		items := make([]jinja.Value, len(x))
		for i, e := range x {
			items[i] = toValue(e)
		}
		return jinja.NewList(items)
	case []Message:
		items := make([]jinja.Value, len(x))
		for i, e := range x {
			items[i] = messageValue(e)
		}
		return jinja.NewList(items)
	case json.RawMessage:
		d, err := DecodeJSON(x)
		if err != nil {
			return jinja.Undefined()
		}
		return toValue(d)
	case bool, int, int64, float64, string, json.Number:
		return jinja.FromGoValue(x)
	case int32:
		return jinja.NewInt(int64(x))
	case float32:
		return jinja.NewFloat(float64(x))
	case []string:
		items := make([]jinja.Value, len(x))
		for i, e := range x {
			items[i] = jinja.NewString(e)
		}
		return jinja.NewList(items)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return jinja.None()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return jinja.Undefined()
	}
	d, err := DecodeJSON(b)
	if err != nil {
		return jinja.Undefined()
	}
	return toValue(d)
}
