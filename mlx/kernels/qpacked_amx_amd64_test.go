//go:build cgo && amd64

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// withPackedKernel runs f with the matmul forced onto the AMX kernel
// (amx) or the VNNI one for every batch size.
func withPackedKernel(t *testing.T, amx bool, f func()) {
	t.Helper()
	if amx && !pq4AMXOK() {
		t.Skip("no AMX-INT8 on this CPU, or the OS did not grant the tile state")
	}
	old := pq4UseAMX
	pq4UseAMX = func(m int) bool { return amx && m <= pq4AMXMaxM }
	defer func() { pq4UseAMX = old }()
	f()
}

// TestPackedQ4Rows holds both packed kernels to the float64 reference at
// every batch size of concurrent decode (1 to 16 rows of x), on shapes
// with partial tiles, partial 16-row blocks, a tail of tiles, one group
// of 128 in the last superblock and a long row, for plain and wide-range x.
func TestPackedQ4Rows(t *testing.T) {
	withoutPQ8(t) // the exact-x kernels, to float32 rounding; TestPackedQ8Rows holds the int8 one
	needPacked(t)
	shapes := [][3]int{{1, 128, 64}, {7, 128, 128}, {16, 256, 64}, {33, 896, 64}, {61, 384, 128}, {131, 640, 128}, {50, 4864, 64}}
	for _, amx := range []bool{false, true} {
		t.Run(fmt.Sprintf("amx=%v", amx), func(t *testing.T) {
			withPackedKernel(t, amx, func() {
				r := rand.New(rand.NewPCG(41, 42))
				for _, sh := range shapes {
					n, k, gs := sh[0], sh[1], sh[2]
					w, s, b, p := packedFixture(t, r, n, k, gs)
					for m := 1; m <= 16; m++ {
						for xi, x := range [][]float32{randSlice(r, m*k), wideX(r, m*k)} {
							want, mag := refQMatmul(x, m, k, n, w, s, b, gs, 4, true)
							out := make([]float32, m*n)
							if err := PackedQ4Matmul(x, m, p, out); err != nil {
								t.Fatal(err)
							}
							assertClose(t, fmt.Sprintf("%v_m%d_x%d", sh, m, xi), out, want, mag, 1e-5)
						}
					}
				}
			})
		})
	}
}

// TestPackedQ4RowsParallel: the AMX kernel split over the workers in
// blocks of 16 rows gives the VNNI kernel's results within float32
// rounding on a matrix large enough to be split, with a tail of tiles.
func TestPackedQ4RowsParallel(t *testing.T) {
	withoutPQ8(t) // the exact-x kernels, to float32 rounding; TestPackedQ8Rows holds the int8 one
	needPacked(t)
	r := rand.New(rand.NewPCG(43, 44))
	const n, k, gs, m = 4099, 896, 64, 8
	w, s, b, p := packedFixture(t, r, n, k, gs)
	x := randSlice(r, m*k)
	want, mag := refQMatmul(x, m, k, n, w, s, b, gs, 4, true)
	for _, amx := range []bool{false, true} {
		withPackedKernel(t, amx, func() {
			got := make([]float32, m*n)
			if err := PackedQ4Matmul(x, m, p, got); err != nil {
				t.Fatal(err)
			}
			assertClose(t, fmt.Sprintf("amx=%v", amx), got, want, mag, 1e-5)
		})
	}
}
