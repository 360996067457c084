package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Limits on an untrusted schema: its size, nesting and breadth stay small
// enough that compiling it takes milliseconds.
const (
	maxSchemaBytes = 1 << 20
	maxSchemaDepth = 32
	maxNodes       = 10000
	maxProps       = 64 // an object's seen-set is one uint64
	maxEnum        = 4096
	// maxDepth bounds the nesting of generated values (free-form JSON can
	// otherwise open brackets for ever).
	maxDepth = 48
	// maxWS is how many whitespace bytes may follow each other between
	// tokens: enough for pretty-printing, not a loop of blanks.
	maxWS = 32
)

type kind uint8

const (
	kNever kind = iota
	kString
	kNumber
	kLiteral // const, enum, true, false, null
	kArray
	kObject
	kAnyOf
)

// node is one compiled schema.
type node struct {
	kind kind
	// string
	minLen, maxLen int // characters; maxLen < 0: no limit
	re             *dfa
	// number
	lo, hi  float64
	integer bool
	// literal: the JSON texts of the allowed values
	lit *trie
	// array
	items              *node
	minItems, maxItems int // maxItems < 0: no limit
	// object
	props    []prop
	keys     *trie  // declared keys, quoted; terminal value = prop index
	required uint64 // bit i: props[i] is required
	addl     *node  // nil: only declared properties; else any key, this value
	// anyOf
	alts []*node

	minSize       int // bytes of the shortest valid value (infinite: none)
	sizing, sized bool
}

type prop struct {
	name string
	key  []byte // the quoted JSON key
	n    *node
}

const infinite = math.MaxInt32

// annotations are keywords that say nothing about validity.
var annotations = map[string]bool{
	"title": true, "description": true, "$schema": true, "$id": true, "$comment": true,
	"default": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// Keywords supported, by the type they constrain.
var (
	stringKeys = map[string]bool{"pattern": true, "minLength": true, "maxLength": true}
	numberKeys = map[string]bool{"minimum": true, "maximum": true}
	arrayKeys  = map[string]bool{"items": true, "minItems": true, "maxItems": true}
	objectKeys = map[string]bool{"properties": true, "required": true, "additionalProperties": true}
	valueKeys  = map[string]bool{"type": true, "enum": true, "const": true, "anyOf": true, "oneOf": true}
)

// Supported lists the JSON Schema keywords Compile understands.
func Supported() []string {
	var out []string
	for _, m := range []map[string]bool{valueKeys, stringKeys, numberKeys, arrayKeys, objectKeys} {
		for k := range m {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

type compiler struct {
	nodes int
	work  int   // pattern automaton work, bounded over the whole schema
	any   *node // free-form JSON, built once
}

// compileSchema parses and compiles a JSON Schema document.
func compileSchema(data []byte) (*node, error) {
	if len(data) > maxSchemaBytes {
		return nil, fmt.Errorf("schema: %d bytes is over the %d-byte limit", len(data), maxSchemaBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("schema: not JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("schema: more than one JSON value")
	}
	c := &compiler{}
	n, err := c.schema(v, "#", 0)
	if err != nil {
		return nil, err
	}
	if n.size() >= infinite {
		return nil, errors.New("schema: no JSON value can satisfy it")
	}
	return n, nil
}

func (c *compiler) newNode(k kind) (*node, error) {
	c.nodes++
	if c.nodes > maxNodes {
		return nil, fmt.Errorf("schema: more than %d sub-schemas", maxNodes)
	}
	return &node{kind: k, maxLen: -1, maxItems: -1, lo: math.Inf(-1), hi: math.Inf(1)}, nil
}

// anyJSON is free-form JSON: what "{}" or "true" allows.
func (c *compiler) anyJSON() *node {
	if c.any != nil {
		return c.any
	}
	a := &node{kind: kAnyOf, maxLen: -1, maxItems: -1}
	c.any = a
	str := &node{kind: kString, maxLen: -1, maxItems: -1}
	num := &node{kind: kNumber, maxLen: -1, maxItems: -1, lo: math.Inf(-1), hi: math.Inf(1)}
	arr := &node{kind: kArray, maxLen: -1, maxItems: -1, items: a}
	obj := &node{kind: kObject, maxLen: -1, maxItems: -1, addl: a, keys: newTrie()}
	lits := &node{kind: kLiteral, lit: newTrie()}
	for _, s := range []string{"true", "false", "null"} {
		lits.lit.add([]byte(s), 0)
	}
	a.alts = []*node{obj, arr, str, num, lits}
	return a
}

func (c *compiler) schema(v any, path string, depth int) (*node, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("schema %s: nested more than %d deep", path, maxSchemaDepth)
	}
	switch s := v.(type) {
	case bool:
		if s {
			return c.anyJSON(), nil
		}
		return c.newNode(kNever)
	case map[string]any:
		return c.object(s, path, depth)
	}
	return nil, fmt.Errorf("schema %s: a schema is an object or a boolean, not %s", path, jsonType(v))
}

func (c *compiler) object(s map[string]any, path string, depth int) (*node, error) {
	var unknown []string
	for k := range s {
		if !annotations[k] && !valueKeys[k] && !stringKeys[k] && !numberKeys[k] && !arrayKeys[k] && !objectKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("schema %s: unsupported keyword %s (supported: %s)", path, strings.Join(unknown, ", "), strings.Join(Supported(), ", "))
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k]; ok {
			if others := keysBut(s, k); len(others) > 0 {
				return nil, fmt.Errorf("schema %s: %s alongside %s is not supported (move them into each branch)", path, k, strings.Join(others, ", "))
			}
			return c.alternatives(k, alts, path, depth)
		}
	}
	if e, ok := s["const"]; ok {
		return c.literals(s, "const", []any{e}, path)
	}
	if e, ok := s["enum"]; ok {
		list, ok := e.([]any)
		if !ok {
			return nil, fmt.Errorf("schema %s: enum must be an array", path)
		}
		return c.literals(s, "enum", list, path)
	}
	types, err := typeList(s, path)
	if err != nil {
		return nil, err
	}
	if types == nil {
		// No type: generate the type the other keywords describe (a
		// subset of what the schema allows, which is all output needs).
		types = inferTypes(s)
	}
	if types == nil {
		return c.anyJSON(), nil
	}
	var alts []*node
	for _, t := range types {
		n, err := c.typed(t, s, path, depth)
		if err != nil {
			return nil, err
		}
		alts = append(alts, n)
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	n, err := c.newNode(kAnyOf)
	if err != nil {
		return nil, err
	}
	n.alts = alts
	return n, nil
}

func (c *compiler) typed(t string, s map[string]any, path string, depth int) (*node, error) {
	switch t {
	case "boolean", "null":
		n, err := c.newNode(kLiteral)
		if err != nil {
			return nil, err
		}
		n.lit = newTrie()
		if t == "null" {
			n.lit.add([]byte("null"), 0)
		} else {
			n.lit.add([]byte("true"), 0)
			n.lit.add([]byte("false"), 0)
		}
		return n, nil
	case "string":
		return c.str(s, path)
	case "number", "integer":
		return c.number(s, t == "integer", path)
	case "array":
		return c.array(s, path, depth)
	}
	return c.obj(s, path, depth)
}

func (c *compiler) str(s map[string]any, path string) (*node, error) {
	n, err := c.newNode(kString)
	if err != nil {
		return nil, err
	}
	if n.minLen, err = count(s, "minLength", 0, path); err != nil {
		return nil, err
	}
	if n.maxLen, err = count(s, "maxLength", -1, path); err != nil {
		return nil, err
	}
	if n.maxLen >= 0 && n.minLen > n.maxLen {
		return nil, fmt.Errorf("schema %s: minLength %d is over maxLength %d", path, n.minLen, n.maxLen)
	}
	if p, ok := s["pattern"]; ok {
		ps, ok := p.(string)
		if !ok {
			return nil, fmt.Errorf("schema %s: pattern must be a string", path)
		}
		if n.minLen > 0 || n.maxLen >= 0 {
			return nil, fmt.Errorf("schema %s: pattern together with minLength/maxLength is not supported (put the length in the pattern, e.g. {2,5})", path)
		}
		if n.re, err = compilePatternWork(ps, &c.work); err != nil {
			return nil, fmt.Errorf("schema %s: pattern %q: %w", path, ps, err)
		}
	}
	return n, nil
}

func (c *compiler) number(s map[string]any, integer bool, path string) (*node, error) {
	n, err := c.newNode(kNumber)
	if err != nil {
		return nil, err
	}
	n.integer = integer
	for _, k := range []string{"minimum", "maximum"} {
		v, ok := s[k]
		if !ok {
			continue
		}
		num, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("schema %s: %s must be a number", path, k)
		}
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("schema %s: %s %s is not a finite number", path, k, num)
		}
		if k == "minimum" {
			n.lo = f
		} else {
			n.hi = f
		}
	}
	if n.lo > n.hi {
		return nil, fmt.Errorf("schema %s: minimum %v is over maximum %v", path, n.lo, n.hi)
	}
	if numSize(n) >= infinite {
		return nil, fmt.Errorf("schema %s: no number Hark can write lies in [%v, %v] (integers up to %d digits, %d decimals)", path, n.lo, n.hi, maxIntDigits, maxFracDigits)
	}
	return n, nil
}

func (c *compiler) array(s map[string]any, path string, depth int) (*node, error) {
	n, err := c.newNode(kArray)
	if err != nil {
		return nil, err
	}
	if n.minItems, err = count(s, "minItems", 0, path); err != nil {
		return nil, err
	}
	if n.maxItems, err = count(s, "maxItems", -1, path); err != nil {
		return nil, err
	}
	if n.maxItems >= 0 && n.minItems > n.maxItems {
		return nil, fmt.Errorf("schema %s: minItems %d is over maxItems %d", path, n.minItems, n.maxItems)
	}
	if it, ok := s["items"]; ok {
		if _, isList := it.([]any); isList {
			return nil, fmt.Errorf("schema %s: items as a list (tuple validation) is not supported", path)
		}
		if n.items, err = c.schema(it, path+"/items", depth+1); err != nil {
			return nil, err
		}
	} else {
		n.items = c.anyJSON()
	}
	return n, nil
}

func (c *compiler) obj(s map[string]any, path string, depth int) (*node, error) {
	n, err := c.newNode(kObject)
	if err != nil {
		return nil, err
	}
	n.keys = newTrie()
	index := map[string]int{}
	if p, ok := s["properties"]; ok {
		props, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("schema %s: properties must be an object", path)
		}
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			sub, err := c.schema(props[k], path+"/properties/"+k, depth+1)
			if err != nil {
				return nil, err
			}
			index[k] = len(n.props)
			n.props = append(n.props, prop{name: k, key: quote(k), n: sub})
		}
	}
	// additionalProperties only shapes generation when no properties are
	// declared: with properties, Hark writes only those (valid either way).
	addl := c.anyJSON()
	if a, ok := s["additionalProperties"]; ok {
		if addl, err = c.schema(a, path+"/additionalProperties", depth+1); err != nil {
			return nil, err
		}
	}
	if r, ok := s["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return nil, fmt.Errorf("schema %s: required must be an array of strings", path)
		}
		for _, e := range list {
			k, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("schema %s: required must be an array of strings", path)
			}
			i, declared := index[k]
			if !declared {
				// Required but not declared: its value follows
				// additionalProperties.
				i = len(n.props)
				index[k] = i
				n.props = append(n.props, prop{name: k, key: quote(k), n: addl})
			}
			n.required |= 1 << uint(i%64)
		}
	}
	if len(n.props) > maxProps {
		return nil, fmt.Errorf("schema %s: %d properties, over the limit of %d", path, len(n.props), maxProps)
	}
	for i, p := range n.props {
		n.keys.add(p.key, i)
	}
	if len(n.props) == 0 {
		n.addl = addl // free-form keys
		if addl.kind == kNever {
			n.addl = nil // only {}
		}
	}
	return n, nil
}

func (c *compiler) alternatives(k string, v any, path string, depth int) (*node, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("schema %s: %s must be a non-empty array", path, k)
	}
	n, err := c.newNode(kAnyOf)
	if err != nil {
		return nil, err
	}
	for i, e := range list {
		a, err := c.schema(e, fmt.Sprintf("%s/%s/%d", path, k, i), depth+1)
		if err != nil {
			return nil, err
		}
		n.alts = append(n.alts, a)
	}
	if k == "oneOf" {
		// A value that matches two branches fails oneOf, so generation
		// needs branches no value can share.
		for i := range n.alts {
			for j := i + 1; j < len(n.alts); j++ {
				if !disjoint(n.alts[i], n.alts[j]) {
					return nil, fmt.Errorf("schema %s: oneOf branches %d and %d may match the same value, which oneOf forbids and Hark cannot rule out while generating; use anyOf, or distinguish them by type or by a required property with different const values", path, i, j)
				}
			}
		}
	}
	return n, nil
}

// literals compiles const/enum; the values must fit the schema's type.
func (c *compiler) literals(s map[string]any, key string, values []any, path string) (*node, error) {
	for k := range s {
		if k != "const" && k != "enum" && k != "type" && !annotations[k] {
			return nil, fmt.Errorf("schema %s: %s alongside %s is not supported", path, key, k)
		}
	}
	if len(values) > maxEnum {
		return nil, fmt.Errorf("schema %s: %s has %d values, over the limit of %d", path, key, len(values), maxEnum)
	}
	types, err := typeList(s, path)
	if err != nil {
		return nil, err
	}
	n, err := c.newNode(kLiteral)
	if err != nil {
		return nil, err
	}
	n.lit = newTrie()
	for _, v := range values {
		if types != nil && !typeMatches(types, v) {
			continue // not valid against type: never generate it
		}
		b, err := canonical(v)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %s value: %w", path, key, err)
		}
		n.lit.add(b, 0)
	}
	return n, nil
}
