//go:build cgo && (linux || darwin)

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestHGemmMatchesSgemm: packing W's panels straight from 16-bit rows
// must give bit for bit what Sgemm gives on the exactly widened W (same
// blocking, same tile, same split), which the float64-reference tests
// bound. Shapes: n under, at and past the 32-column panel with tails
// under 16; k with tails under the 16-value transpose block and over
// several 256-value k blocks; m above and below n (the two splits),
// with a partial 12-row tile; NaN and Inf weights (widening keeps them).
func TestHGemmMatchesSgemm(t *testing.T) {
	if ownSgemm == nil || forceBLAS {
		t.Skip("no own AVX-512 sgemm here: HMatmul widens tiles for Sgemm")
	}
	r := rand.New(rand.NewPCG(19, 40))
	for _, f := range []Half{BF16, F16} {
		for _, sh := range [][3]int{{12, 16, 32}, {37, 17, 33}, {100, 600, 45}, {97, 1100, 200}, {300, 513, 70}, {50, 300, 1000}} {
			m, k, n := sh[0], sh[1], sh[2]
			w := randHalf(r, n*k, f)
			inf, nan := uint16(0x7f80), uint16(0x7fc1)
			if f == F16 {
				inf, nan = 0x7c00, 0x7e01
			}
			w[3*k/2], w[len(w)-1] = inf, nan
			wf := make([]float32, n*k)
			HalfToF32(wf, w, f)
			x := randSlice(r, m*k)
			got, want := nanOut(m*n), nanOut(m*n)
			if !hgemmT(x, m, k, n, w, f, got) {
				t.Fatalf("%v m%d k%d n%d: hgemmT declined", f, m, k, n)
			}
			ownSgemm(false, true, m, n, k, 1, x, k, wf, k, 0, want, n) // the kernel hgemm mirrors (Sgemm takes sgemm_rows.c up to SgemmRowsMaxM rows)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v m%d k%d n%d: out[%d] = %v, Sgemm on the widened W gives %v", f, m, k, n, i, got[i], want[i])
				}
			}
		}
	}
}
