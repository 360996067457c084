//go:build cgo

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQGemmT checks the fused dequantize-in-packing GEMM (the prefill path
// of x @ W^T) against the float64 reference, called directly so that every
// shape reaches it whatever m QMatmul would route there: m = 1 and m not a
// multiple of the 12-row tile, n not a multiple of the 32-row panel (and
// under 16, a half-empty panel), k over several groups and across the
// 256-value KC blocks, groups of 32, 64 and 128, bits 2, 4 and 8.
func TestQGemmT(t *testing.T) {
	if !haveAVX512 {
		t.Skip("CPU lacks AVX-512: the fused kernel does not run here")
	}
	r := rand.New(rand.NewPCG(19, 2))
	for _, bits := range []int{2, 4, 8} {
		for _, gs := range []int{32, 64, 128} {
			for _, sh := range [][3]int{{1, 128, 32}, {13, 640, 45}, {25, 256, 7}, {100, 384, 70}, {12, 896, 96}} {
				m, k, n := sh[0], sh[1], sh[2]
				if k%gs != 0 {
					continue
				}
				name := fmt.Sprintf("b%d_g%d_m%d_k%d_n%d", bits, gs, m, k, n)
				w, x := randSlice(r, n*k), randSlice(r, m*k)
				packed, scales, biases, err := Quantize(w, n, k, gs, bits)
				if err != nil {
					t.Fatal(name, err)
				}
				q := qmat{packed, scales, biases, gs, bits}
				out := make([]float32, m*n)
				for i := range out {
					out[i] = float32(math.NaN()) // must be overwritten
				}
				if !qgemmT(x, m, k, n, q, out) {
					t.Fatalf("%s: fused kernel declined a supported format", name)
				}
				want, mag := refQMatmul(x, m, k, n, packed, scales, biases, gs, bits, true)
				assertClose(t, name, out, want, mag, 1e-5)

			}
		}
	}
}

// TestQGemmPackedT is TestQGemmT for weights in the packed 4-bit layout
// (what prefill reads on CPUs where decode packs): groups of 64 and 128,
// an odd number of groups of 128 (a final one-group superblock), n not a
// multiple of the 4-row tile, k across KC blocks.
func TestQGemmPackedT(t *testing.T) {
	if !haveAVX512 {
		t.Skip("CPU lacks AVX-512: the fused kernel does not run here")
	}
	r := rand.New(rand.NewPCG(19, 3))
	for _, gs := range []int{64, 128} {
		for _, sh := range [][3]int{{1, 128, 32}, {13, 640, 45}, {25, 256, 7}, {100, 384, 70}, {12, 896, 97}} {
			m, k, n := sh[0], sh[1], sh[2]
			name := fmt.Sprintf("g%d_m%d_k%d_n%d", gs, m, k, n)
			w, x := randSlice(r, n*k), randSlice(r, m*k)
			packed, scales, biases, err := Quantize(w, n, k, gs, 4)
			if err != nil {
				t.Fatal(name, err)
			}
			p, err := PackQ4(packed, scales, biases, n, k, gs, make([]byte, PackedQ4Bytes(n, k, gs)))
			if err != nil {
				t.Fatal(name, err)
			}
			out := make([]float32, m*n)
			for i := range out {
				out[i] = float32(math.NaN()) // must be overwritten
			}
			if !qgemmPackedT(x, m, p, out) {
				t.Fatalf("%s: fused kernel declined a supported format", name)
			}
			want, mag := refQMatmul(x, m, k, n, packed, scales, biases, gs, 4, true)
			assertClose(t, name, out, want, mag, 1e-5)
		}
	}
}

// TestQGemmTDeclines: formats whose values straddle words (3, 5, 6 bits)
// are left to the dequantize-then-Sgemm path.
func TestQGemmTDeclines(t *testing.T) {
	for _, bits := range []int{3, 5, 6} {
		k, n, m := 128, 4, 2
		packed, scales, biases, err := Quantize(randSlice(rand.New(rand.NewPCG(1, 1)), n*k), n, k, 64, bits)
		if err != nil {
			t.Fatal(err)
		}
		if qgemmT(randSlice(rand.New(rand.NewPCG(2, 2)), m*k), m, k, n, qmat{packed, scales, biases, 64, bits}, make([]float32, m*n)) {
			t.Errorf("bits %d: fused kernel ran on a format it does not support", bits)
		}
	}
}
