package chattemplate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// Object is a JSON object that remembers its key order. Templates dump tool
// schemas and tool-call arguments with tojson, and HF's output keeps the
// order the keys were given in; a Go map would scramble it.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty Object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Set adds or replaces a key, keeping the first position of a key.
func (o *Object) Set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Get returns the value of k.
func (o *Object) Get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// Keys returns the keys in order.
func (o *Object) Keys() []string { return o.keys }

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// UnmarshalJSON decodes an object, nesting Objects for inner objects.
func (o *Object) UnmarshalJSON(b []byte) error {
	v, err := DecodeJSON(b)
	if err != nil {
		return err
	}
	obj, ok := v.(*Object)
	if !ok {
		return fmt.Errorf("chattemplate: want a JSON object, got %T", v)
	}
	*o = *obj
	return nil
}

// MarshalJSON writes the keys in order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// DecodeJSON decodes JSON into nil, bool, string, json.Number, []any and
// *Object, keeping object key order and number text.
func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("chattemplate: trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := NewObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("chattemplate: object key %v is not a string", kt)
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.Set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return list, nil
		}
		return nil, fmt.Errorf("chattemplate: unexpected %v", t)
	}
	return tok, nil
}

// Message is one chat message. Any JSON keys are kept (role, content as a
// string or a list of parts, tool_calls, reasoning_content, ...); nested
// objects decode as *Object so their key order survives.
type Message map[string]any

// UnmarshalJSON keeps nested key order (see Message).
func (m *Message) UnmarshalJSON(b []byte) error {
	var o Object
	if err := o.UnmarshalJSON(b); err != nil {
		return err
	}
	*m = Message{}
	for _, k := range o.keys {
		(*m)[k] = o.vals[k]
	}
	return nil
}

// sortedKeys gives Go maps a stable order, since they have none of their own.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
