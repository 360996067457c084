//go:build cgo && amd64

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSgemmAVX2 and TestSgemmAVX512 check the hand-written kernels directly (Sgemm may route
// elsewhere): every transpose combination, sizes around the 6x16 tile and
// the KC/MC/NC block edges (tiles 6x16 and 12x32), alpha/beta variants, padded strides.
func TestSgemmAVX2(t *testing.T) {
	if !haveAVX2 {
		t.Skip("CPU lacks AVX2/FMA")
	}
	testOwnSgemm(t, sgemmAVX2)
}

func TestSgemmAVX512(t *testing.T) {
	if !haveAVX512 {
		t.Skip("CPU lacks AVX-512")
	}
	testOwnSgemm(t, sgemmAVX512)
}

func testOwnSgemm(t *testing.T, impl func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int)) {
	r := rand.New(rand.NewPCG(21, 22))
	sizes := []int{1, 3, 7, 17, 33, 65}
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			for _, m := range sizes {
				for _, n := range sizes {
					k := sizes[(m*3+n)%len(sizes)]
					t.Run(fmt.Sprintf("%v%v/%dx%dx%d", tA, tB, m, n, k), func(t *testing.T) {
						runSgemmCase(t, r, tA, tB, m, n, k, 1, 0, impl)
					})
				}
			}
			runSgemmCase(t, r, tA, tB, 13, 3100, 257, 0.5, 2, impl) // crosses NC and KC
			runSgemmCase(t, r, tA, tB, 250, 37, 513, -1, 0, impl)   // crosses MC, splits rows
		}
	}
}

func BenchmarkSgemmAVX2(b *testing.B) {
	if !haveAVX2 {
		b.Skip("CPU lacks AVX2/FMA")
	}
	benchSgemm(b, sgemmAVX2)
}

func BenchmarkSgemmAVX512(b *testing.B) {
	if !haveAVX512 {
		b.Skip("CPU lacks AVX-512")
	}
	benchSgemm(b, sgemmAVX512)
}
