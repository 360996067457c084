package mlx_test

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
	"hark/mlx/kernels"
)

// TestQuantMatrixInt8Rows holds a packed 4-bit matrix's prompt-sized
// matmuls, which take the int8-x kernel by default where the CPU backend
// has it, to the float64 product of x and the dequantized weights within
// the bound that kernel's rounding of x allows, derived here:
//
// The kernel rounds x per weight group g of a row to xi·d_g with
// d_g = max|x_g|/127, so each value moves by at most d_g/2. The weight is
// s_g·q + b_g, and the kernel takes the bias term b_g·Σx_g from x's float
// sums, so the error is Σ_g Σ_{v in g} (xi_v·d_g − x_v)·s_g·q_v and
// |err| <= Σ_g d_g/2 · Σ_{v in g} |w_v − b_g| (w the dequantized weight).
// On top of that goes float32 rounding, 1e-5 of Σ|x·w| as TestQuantMatrix
// allows. Where the int8 kernel ran, the result must also differ from the
// exact-x kernels' somewhere (else this test would hold the exact path).
func TestQuantMatrixInt8Rows(t *testing.T) {
	leakFree(t)
	r := newRNG(75)
	const n, k = 37, 384
	for _, gs := range []int{64, 128} {
		w := mlx.FromSlice(randSlice(r, n*k, -1, 1), n, k)
		wq, s, b, err := mlx.Quantize(w, gs, 4)
		if err != nil {
			t.Fatal(err)
		}
		q := mlx.NewQuantMatrix(mlx.Copy(wq), mlx.Copy(s), mlx.Copy(b), gs, 4)
		mlx.Free(q.Pack()...)
		deqA := mlx.Dequantize(wq, s, b, gs, 4)
		deq, bias := deqA.Float32s(), b.Float32s()
		gpr := k / gs
		for _, m := range []int{kernels.PackedInt8MinRows, 300} {
			name := fmt.Sprintf("g%d m%d %v", gs, m, q)
			xs := randSlice(r, m*k, -1, 1)
			// One outlier per row, as activations have: its group's d_g
			// grows and the bound with it.
			for i := range m {
				xs[i*k+(i*7)%k] = 20
			}
			x := mlx.FromSlice(xs, m, k)
			got := q.MatmulT(x)
			restore := mlx.ExactQuantizedX()
			exact := q.MatmulT(x)
			restore()
			gv, ev := got.Float32s(), exact.Float32s()
			int8Ran := mlx.DefaultBackend().Name() == "cpu" && q.Packed() && kernels.PackedInt8Rows(m, k, gs)
			differs := false
			for i := range m {
				for j := range n {
					want, mag, bound := 0.0, 0.0, 0.0
					for g := range gpr {
						amax, sq := 0.0, 0.0
						for c := g * gs; c < (g+1)*gs; c++ {
							xv, wv := float64(xs[i*k+c]), float64(deq[j*k+c])
							want += xv * wv
							mag += math.Abs(xv * wv)
							amax = math.Max(amax, math.Abs(xv))
							sq += math.Abs(wv - float64(bias[j*gpr+g]))
						}
						bound += amax / 127 / 2 * sq
					}
					allowed := bound + 1e-5*(mag+1e-30)
					if d := math.Abs(float64(gv[i*n+j]) - want); !(d <= allowed) {
						t.Fatalf("%s: out[%d][%d] = %.9g, want %.9g within %.3g (diff %.3g)", name, i, j, gv[i*n+j], want, allowed, d)
					}
					differs = differs || gv[i*n+j] != ev[i*n+j]
				}
			}
			if int8Ran && !differs {
				t.Errorf("%s: the int8-x kernel was to run but gave the exact-x results bit for bit", name)
			}
			mlx.Free(x, got, exact)
		}
		mlx.Free(w, wq, s, b, deqA)
		mlx.Free(q.Arrays()...)
	}
}
