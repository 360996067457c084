package mel

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// f32 is the little-endian bytes of vals.
func f32(vals ...float32) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// FuzzReadNPY: an arbitrary .npy (the reference mel inputs are .npy) gives
// an array whose data matches its shape, or an error; never a panic or a
// giant allocation.
func FuzzReadNPY(f *testing.F) {
	f.Add(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f32(1, 2, 3, 4, 5, 6)))
	f.Add(npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", f32(0, 1)))
	f.Add(npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (), }", f32(7)))
	f.Add(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999, 99999999), }", nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ReadNPY(bytes.NewReader(b))
		if err != nil {
			return
		}
		n := 1
		for _, d := range a.Shape {
			if d < 0 {
				t.Fatalf("negative dimension in %v", a.Shape)
			}
			n *= d
		}
		if n != len(a.Data) {
			t.Fatalf("shape %v but %d values", a.Shape, len(a.Data))
		}
	})
}
