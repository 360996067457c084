//go:build cgo

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestQMatmulPathsAgree runs the best kernel, the best float kernel (they
// differ where the 4-bit integer kernel runs), the AVX2 one (where AVX-512
// would win), the portable C kernel and the Go kernel on the same inputs;
// each must match the float64 reference, so they agree with each other to
// within float32 rounding.
func TestQMatmulPathsAgree(t *testing.T) {
	t.Logf("features: %s", Features())
	r := rand.New(rand.NewPCG(11, 12))
	for _, bits := range ValidBits {
		for _, gs := range ValidGroupSizes {
			for _, m := range []int{1, 2, 3, 5, 9} {
				k, n := 2*gs, 37
				w := randSlice(r, n*k)
				x := randSlice(r, m*k)
				packed, scales, biases, err := Quantize(w, n, k, gs, bits)
				if err != nil {
					t.Fatal(err)
				}
				q := qmat{packed, scales, biases, gs, bits}
				want, mag := refQMatmul(x, m, k, n, packed, scales, biases, gs, bits, true)
				name := fmt.Sprintf("b%d_g%d_m%d", bits, gs, m)
				for _, path := range []struct {
					name string
					run  func(out []float32)
				}{
					{"simd", func(out []float32) { qmatmulTC(x, m, k, n, q, out, 0) }},
					{"float", func(out []float32) { qmatmulTC(x, m, k, n, q, out, 3) }},
					{"c", func(out []float32) { qmatmulTC(x, m, k, n, q, out, 1) }},
					{"no512", func(out []float32) { qmatmulTC(x, m, k, n, q, out, 2) }},
					{"go", func(out []float32) { qmatmulGo(x, m, k, n, q, true, out) }},
				} {
					out := make([]float32, m*n)
					path.run(out)
					assertClose(t, name+"/"+path.name, out, want, mag, 1e-5)
				}
			}
		}
	}
}

// TestDequantizePathsBitExact: SIMD, portable C and Go dequantization must
// agree bit for bit (none of them may fuse the multiply and add).
func TestDequantizePathsBitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, bits := range ValidBits {
		for _, gs := range ValidGroupSizes {
			rows, cols := 7, 3*gs
			packed, scales, biases, err := Quantize(randSlice(r, rows*cols), rows, cols, gs, bits)
			if err != nil {
				t.Fatal(err)
			}
			q := qmat{packed, scales, biases, gs, bits}
			ref := make([]float32, rows*cols)
			dequantizeGo(q, cols, 0, rows, ref)
			for force := 0; force <= 1; force++ {
				got := make([]float32, rows*cols)
				dequantize(q, cols, 0, rows, got, force)
				if !bitsEqualF(got, ref) {
					t.Errorf("bits %d group %d force %d: C dequantize differs from Go", bits, gs, force)
				}
			}
		}
	}
}

func bitsEqualF(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestQMatmulSplitRows covers calls large enough to fan out over goroutines
// and the m == 1 kernels that take several weight rows at a time, with a
// row count that leaves a ragged final block.
func TestQMatmulSplitRows(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, bits := range []int{4, 8, 3} {
		for _, m := range []int{1, 2} {
			k, n, gs := 512, 2053, 64
			packed, scales, biases, err := Quantize(randSlice(r, n*k), n, k, gs, bits)
			if err != nil {
				t.Fatal(err)
			}
			x := randSlice(r, m*k)
			q := qmat{packed, scales, biases, gs, bits}
			want, mag := refQMatmul(x, m, k, n, packed, scales, biases, gs, bits, true)
			for force := 0; force <= 3; force++ {
				out := make([]float32, m*n)
				qmatmulTC(x, m, k, n, q, out, force)
				assertClose(t, fmt.Sprintf("b%d_m%d_force%d", bits, m, force), out, want, mag, 1e-5)
			}
		}
	}
}

// lineAligned finds the first cache-line start at or after i, never more
// than a line on, for every starting offset of a slice.
func TestLineAligned(t *testing.T) {
	buf := make([]float32, 256)
	for shift := 0; shift < cacheLineFloats; shift++ {
		s := buf[shift:]
		for i := 0; i < 64; i++ {
			j := lineAligned(s, i)
			if j < i || j >= i+cacheLineFloats {
				t.Fatalf("shift %d: lineAligned(%d) = %d, want within a line past it", shift, i, j)
			}
			if p := uintptr(unsafe.Pointer(&s[j])); p%64 != 0 {
				t.Fatalf("shift %d: lineAligned(%d) = %d at %#x, not on a cache line", shift, i, j, p)
			}
		}
	}
}
