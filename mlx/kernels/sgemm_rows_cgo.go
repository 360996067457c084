//go:build cgo && (linux || darwin)

package kernels

/*
#cgo CFLAGS: -O3
void hark_sgemm_rows(const float* x, int m, int k, int ldx, const float* w, int ldw, int j0, int j1, float alpha,
                     float beta, float* out, int ldo);
*/
import "C"

// sgemmRowsMinChunk is the fewest W rows a worker takes: about
// qmmInlineBytes of float32 weights.
func sgemmRowsMinChunk(k int) int { return max(1, qmmInlineBytes/(4*max(k, 1))) }

// sgemmRows is x @ Wᵀ (alpha, beta as Sgemm) for m <= SgemmRowsMaxM,
// the workers taking W's rows.
func sgemmRows(m, n, k int, alpha float32, x []float32, ldx int, w []float32, ldw int, beta float32, out []float32, ldo int) {
	xp, wp, op := fptr(x), fptr(w), fptr(out)
	parallelFor(n, 1, sgemmRowsMinChunk(k), func(lo, hi int) {
		C.hark_sgemm_rows(xp, C.int(m), C.int(k), C.int(ldx), wp, C.int(ldw), C.int(lo), C.int(hi), C.float(alpha), C.float(beta), op, C.int(ldo))
	})
}
