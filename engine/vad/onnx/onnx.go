// Package onnx reads the parts of an ONNX model file that Hark needs to take
// weights out of it: the graph's nodes (for inspection) and its initializers
// and Constant tensors. It decodes the protobuf wire format itself, so the
// app needs no protobuf dependency; only float32 and int64 tensors are kept.
//
// The file is untrusted: every length is checked against the bytes left, and
// nesting is bounded, so a damaged file is an error rather than a panic or a
// runaway allocation.
package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Tensor is one named tensor from the model.
type Tensor struct {
	Name    string
	Dims    []int
	Float32 []float32 // data_type 1
	Int64   []int64   // data_type 7
	DType   int       // ONNX TensorProto.DataType
}

// Attr is one node attribute (only the kinds Hark reads).
type Attr struct {
	Name   string
	Int    int64
	Float  float32
	Ints   []int64
	Str    string
	Tensor *Tensor
	Graph  *Graph
}

// Node is one graph node.
type Node struct {
	Name, OpType    string
	Inputs, Outputs []string
	Attrs           []Attr
}

// Graph is a (sub)graph.
type Graph struct {
	Name         string
	Nodes        []Node
	Initializers []Tensor
	Inputs       []string
	Outputs      []string
}

// maxDepth bounds subgraph nesting (If/Loop bodies).
const maxDepth = 8

// Parse decodes a ModelProto and returns its main graph.
func Parse(b []byte) (*Graph, error) {
	var g *Graph
	err := fields(b, func(num int, wt int, v uint64, data []byte) error {
		if num == 7 && wt == 2 {
			gg, err := parseGraph(data, 0)
			if err != nil {
				return fmt.Errorf("onnx: graph: %w", err)
			}
			g = gg
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, errors.New("onnx: model has no graph")
	}
	return g, nil
}

// Tensors returns every initializer and Constant-node tensor in g and its
// subgraphs, by name (Constant tensors are named for the node's output).
func (g *Graph) Tensors() map[string]*Tensor {
	out := map[string]*Tensor{}
	var walk func(g *Graph)
	walk = func(g *Graph) {
		for i := range g.Initializers {
			out[g.Initializers[i].Name] = &g.Initializers[i]
		}
		for _, n := range g.Nodes {
			for _, a := range n.Attrs {
				if a.Graph != nil {
					walk(a.Graph)
				}
				if n.OpType == "Constant" && a.Name == "value" && a.Tensor != nil && len(n.Outputs) == 1 {
					t := *a.Tensor
					t.Name = n.Outputs[0]
					out[t.Name] = &t
				}
			}
		}
	}
	walk(g)
	return out
}

func parseGraph(b []byte, depth int) (*Graph, error) {
	if depth > maxDepth {
		return nil, errors.New("subgraphs nested too deep")
	}
	g := &Graph{}
	err := fields(b, func(num, wt int, v uint64, data []byte) error {
		switch {
		case num == 1 && wt == 2:
			n, err := parseNode(data, depth)
			if err != nil {
				return err
			}
			g.Nodes = append(g.Nodes, n)
		case num == 2 && wt == 2:
			g.Name = string(data)
		case num == 5 && wt == 2:
			t, err := parseTensor(data)
			if err != nil {
				return err
			}
			g.Initializers = append(g.Initializers, t)
		case (num == 11 || num == 12) && wt == 2:
			name := ""
			if err := fields(data, func(n2, wt2 int, _ uint64, d2 []byte) error {
				if n2 == 1 && wt2 == 2 {
					name = string(d2)
				}
				return nil
			}); err != nil {
				return err
			}
			if num == 11 {
				g.Inputs = append(g.Inputs, name)
			} else {
				g.Outputs = append(g.Outputs, name)
			}
		}
		return nil
	})
	return g, err
}

func parseNode(b []byte, depth int) (Node, error) {
	var n Node
	err := fields(b, func(num, wt int, v uint64, data []byte) error {
		if wt != 2 {
			return nil
		}
		switch num {
		case 1:
			n.Inputs = append(n.Inputs, string(data))
		case 2:
			n.Outputs = append(n.Outputs, string(data))
		case 3:
			n.Name = string(data)
		case 4:
			n.OpType = string(data)
		case 5:
			a, err := parseAttr(data, depth)
			if err != nil {
				return fmt.Errorf("node %q: %w", n.Name, err)
			}
			n.Attrs = append(n.Attrs, a)
		}
		return nil
	})
	return n, err
}

func parseAttr(b []byte, depth int) (Attr, error) {
	var a Attr
	err := fields(b, func(num, wt int, v uint64, data []byte) error {
		switch {
		case num == 1 && wt == 2:
			a.Name = string(data)
		case num == 2 && wt == 5:
			a.Float = math.Float32frombits(uint32(v))
		case num == 3 && wt == 0:
			a.Int = int64(v)
		case num == 4 && wt == 2:
			a.Str = string(data)
		case num == 5 && wt == 2:
			t, err := parseTensor(data)
			if err != nil {
				return err
			}
			a.Tensor = &t
		case num == 6 && wt == 2:
			g, err := parseGraph(data, depth+1)
			if err != nil {
				return err
			}
			a.Graph = g
		case num == 8 && wt == 0:
			a.Ints = append(a.Ints, int64(v))
		case num == 8 && wt == 2:
			vs, err := varints(data)
			if err != nil {
				return err
			}
			a.Ints = append(a.Ints, vs...)
		}
		return nil
	})
	return a, err
}

func parseTensor(b []byte) (Tensor, error) {
	var t Tensor
	var raw []byte
	var floats []float32
	var ints []int64
	err := fields(b, func(num, wt int, v uint64, data []byte) error {
		switch {
		case num == 1 && wt == 0:
			t.Dims = append(t.Dims, int(int64(v)))
		case num == 1 && wt == 2:
			vs, err := varints(data)
			if err != nil {
				return err
			}
			for _, d := range vs {
				t.Dims = append(t.Dims, int(d))
			}
		case num == 2 && wt == 0:
			t.DType = int(v)
		case num == 4 && wt == 2:
			if len(data)%4 != 0 {
				return errors.New("float_data is not a whole number of floats")
			}
			for i := 0; i < len(data); i += 4 {
				floats = append(floats, math.Float32frombits(binary.LittleEndian.Uint32(data[i:])))
			}
		case num == 4 && wt == 5:
			floats = append(floats, math.Float32frombits(uint32(v)))
		case num == 7 && wt == 2:
			vs, err := varints(data)
			if err != nil {
				return err
			}
			ints = append(ints, vs...)
		case num == 7 && wt == 0:
			ints = append(ints, int64(v))
		case num == 8 && wt == 2:
			t.Name = string(data)
		case num == 9 && wt == 2:
			raw = data
		case num == 14 && wt == 0 && v != 0:
			return errors.New("tensor data stored outside the file is not supported")
		}
		return nil
	})
	if err != nil {
		return t, err
	}
	n := 1
	for _, d := range t.Dims {
		if d < 0 || d > 1<<28 || n*max(d, 1) > 1<<28 {
			return t, fmt.Errorf("tensor %q: bad dims %v", t.Name, t.Dims)
		}
		n *= d
	}
	switch t.DType {
	case 1:
		if raw != nil {
			if len(raw) != 4*n {
				return t, fmt.Errorf("tensor %q: %d raw bytes for %d floats", t.Name, len(raw), n)
			}
			floats = make([]float32, n)
			for i := range floats {
				floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		}
		if len(floats) != n {
			return t, fmt.Errorf("tensor %q: %d floats for dims %v", t.Name, len(floats), t.Dims)
		}
		t.Float32 = floats
	case 7:
		if raw != nil {
			if len(raw) != 8*n {
				return t, fmt.Errorf("tensor %q: %d raw bytes for %d int64s", t.Name, len(raw), n)
			}
			ints = make([]int64, n)
			for i := range ints {
				ints[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
			}
		}
		if len(ints) != n {
			return t, fmt.Errorf("tensor %q: %d int64s for dims %v", t.Name, len(ints), t.Dims)
		}
		t.Int64 = ints
	}
	return t, nil
}

// fields walks one protobuf message, calling fn for each field with its
// number, wire type, scalar value (varint/fixed) or bytes (length-delimited).
func fields(b []byte, fn func(num, wt int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errors.New("bad field key")
		}
		b = b[n:]
		num, wt := int(key>>3), int(key&7)
		var v uint64
		var data []byte
		switch wt {
		case 0:
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return errors.New("bad varint")
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return errors.New("truncated fixed64")
			}
			v, b = binary.LittleEndian.Uint64(b), b[8:]
		case 5:
			if len(b) < 4 {
				return errors.New("truncated fixed32")
			}
			v, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errors.New("truncated length-delimited field")
			}
			data, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return fmt.Errorf("unsupported wire type %d", wt)
		}
		if err := fn(num, wt, v, data); err != nil {
			return err
		}
	}
	return nil
}

func varints(b []byte) ([]int64, error) {
	var out []int64
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("bad packed varint")
		}
		out = append(out, int64(v))
		b = b[n:]
	}
	return out, nil
}
