package mlx_test

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
)

func TestDTypeNames(t *testing.T) {
	leakFree(t)
	for _, c := range []struct {
		name string
		dt   mlx.DType
		size int
	}{{"F32", mlx.Float32, 4}, {"F16", mlx.Float16, 2}, {"BF16", mlx.BFloat16, 2}, {"I32", mlx.Int32, 4},
		{"U32", mlx.Uint32, 4}, {"U8", mlx.Uint8, 1}, {"BOOL", mlx.Bool, 1}, {"bfloat16", mlx.BFloat16, 2}} {
		dt, err := mlx.ParseDType(c.name)
		if err != nil || dt != c.dt || dt.Size() != c.size {
			t.Fatalf("ParseDType(%q) = %v, %v", c.name, dt, err)
		}
		if back, err := mlx.ParseDType(dt.String()); err != nil || back != dt {
			t.Fatalf("String round trip for %v", dt)
		}
	}
	if _, err := mlx.ParseDType("F64"); err == nil {
		t.Fatal("F64 is not supported and must be an error")
	}
}

func TestSoftmaxFullyMaskedRow(t *testing.T) {
	leakFree(t)
	inf := float32(math.Inf(-1))
	x := mlx.FromSlice([]float32{inf, inf, 0, 0}, 2, 2)
	s := mlx.Softmax(x, -1)
	defer mlx.Free(x, s)
	if fmt.Sprint(s.Float32s()) != "[0 0 0.5 0.5]" {
		t.Fatalf("softmax %v", s.Float32s())
	}
}
