package cpu

import (
	"math/rand/v2"
	"testing"

	"hark/mlx"
	"hark/mlx/kernels"
)

// TestPacksWhereItHasTheKernel: the cpu backend packs exactly the formats
// its packed 4-bit kernel covers (what mlx.QuantMatrix then computes is
// tested in package mlx), and the packed matrix holds one array.
func TestPacksWhereItHasTheKernel(t *testing.T) {
	defer checkNoLeaks(t, mlx.LiveArrays())
	r := rand.New(rand.NewPCG(5, 6))
	for _, f := range [][2]int{{4, 64}, {4, 128}, {8, 64}, {4, 32}} {
		bits, gs := f[0], f[1]
		w := mlx.FromSlice(randF32(r, 8*256), 8, 256)
		wq, s, b, err := mlx.Quantize(w, gs, bits)
		if err != nil {
			t.Fatal(err)
		}
		q := mlx.NewQuantMatrix(wq, s, b, gs, bits)
		replaced := q.Pack()
		want := !keepMLXLayout && bits == 4 && kernels.PackedQ4Supported(256, gs)
		if q.Packed() != want || (len(replaced) == 3) != want || (want && len(q.Arrays()) != 1) {
			t.Errorf("%d bits in groups of %d on %s: packed %v, want %v", bits, gs, kernels.Features(), q.Packed(), want)
		}
		mlx.Free(replaced...)
		mlx.Free(q.Arrays()...)
		w.Free()
	}
}
