package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// A batched decode step gives each row what it gets alone only if the
// kernels its projections take sum a row the same way at every batch
// size up to the batch's rows: Sgemm's x @ Wᵀ up to SgemmRowsMaxM rows,
// and HMatmul's on every kernel variant up to HMatmulRowsMaxM, for row
// lengths with and without a tail past their vector blocks.
func TestRowsSumAsAlone(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sh := range [][2]int{{64, 40}, {96, 200}, {200, 33}, {896, 130}, {4864, 24}} {
		k, n := sh[0], sh[1]
		w := randSlice(r, n*k)
		x := randSlice(r, max(SgemmRowsMaxM, HMatmulRowsMaxM)*k)
		check := func(what string, rows int, mul func(x []float32, m int, out []float32)) {
			t.Helper()
			alone := make([]float32, rows*n)
			for i := range rows {
				mul(x[i*k:(i+1)*k], 1, alone[i*n:(i+1)*n])
			}
			for m := 2; m <= rows; m++ {
				out := make([]float32, m*n)
				mul(x, m, out)
				for i, v := range out {
					if math.Float32bits(v) != math.Float32bits(alone[i]) {
						t.Errorf("%s k=%d n=%d: row %d of %d, column %d: %v, alone %v", what, k, n, i/n, m, i%n, v, alone[i])
						return
					}
				}
			}
		}
		check("sgemm", SgemmRowsMaxM, func(x []float32, m int, out []float32) {
			Sgemm(false, true, m, n, k, 1, x, k, w, k, 0, out, n)
		})
		for _, f := range []Half{BF16, F16} {
			hw := randHalf(r, n*k, f)
			for _, v := range hmmVariants {
				setHmmForce(v.force)
				check(fmt.Sprintf("hmatmul %v %s", f, v.name), HMatmulRowsMaxM, func(x []float32, m int, out []float32) {
					if err := HMatmul(x, m, k, n, hw, f, true, out); err != nil {
						t.Fatal(err)
					}
				})
			}
			setHmmForce(0)
		}
	}
}
