package onnx

import (
	"encoding/binary"
	"testing"
)

// tag appends a length-delimited field.
func tag(b []byte, num int, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(num<<3|2))
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

// tinyModel is a model with one 2-float initializer and one Relu node.
func tinyModel() []byte {
	var t []byte
	t = binary.AppendUvarint(t, 1<<3) // dims: 2
	t = binary.AppendUvarint(t, 2)
	t = binary.AppendUvarint(t, 2<<3) // data_type: float
	t = binary.AppendUvarint(t, 1)
	t = tag(t, 8, []byte("w"))
	t = tag(t, 9, []byte{0, 0, 128, 63, 0, 0, 0, 64}) // 1, 2
	var n []byte
	n = tag(n, 1, []byte("w"))
	n = tag(n, 2, []byte("y"))
	n = tag(n, 4, []byte("Relu"))
	var g []byte
	g = tag(g, 1, n)
	g = tag(g, 5, t)
	return tag(nil, 7, g)
}

func TestParseTiny(t *testing.T) {
	g, err := Parse(tinyModel())
	if err != nil {
		t.Fatal(err)
	}
	w := g.Tensors()["w"]
	if w == nil || len(w.Float32) != 2 || w.Float32[0] != 1 || w.Float32[1] != 2 {
		t.Fatalf("tensor w = %+v", w)
	}
	if len(g.Nodes) != 1 || g.Nodes[0].OpType != "Relu" {
		t.Fatalf("nodes = %+v", g.Nodes)
	}
	// Every truncation is an error or a smaller graph, never a panic.
	b := tinyModel()
	for i := range b {
		_, _ = Parse(b[:i])
	}
	// A raw_data length that disagrees with the dims is an error.
	bad := tinyModel()
	bad[len(bad)-1] = 0
	if _, err := Parse(bad[:len(bad)-2]); err == nil {
		t.Fatal("truncated raw_data parsed")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(tinyModel())
	f.Add([]byte{})
	f.Add([]byte{0x3a, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Parse(b)
		if err == nil {
			_ = g.Tensors()
		}
	})
}
