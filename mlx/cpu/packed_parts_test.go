package cpu

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"hark/mlx"
	"hark/mlx/kernels"
)

// TestPackedPartsAreTheJoinedMatrixPacked: packing q/k/v-like parts side
// by side gives the very bytes of packing their concatenation, a last part
// of a partial tile included, and parts that would split a tile are left
// to the caller (nil).
func TestPackedPartsAreTheJoinedMatrixPacked(t *testing.T) {
	if keepMLXLayout || !kernels.PackedQ4Supported(256, 64) {
		t.Skipf("no packed 4-bit kernel on %s (or HARK_Q4_LAYOUT=mlx)", kernels.Features())
	}
	defer checkNoLeaks(t, mlx.LiveArrays())
	r := rand.New(rand.NewPCG(7, 8))
	for _, rows := range [][]int{{8, 4, 4}, {12, 8, 6}, {4, 5}, {6, 4}} {
		var parts []*mlx.QuantMatrix
		var ws []*mlx.Array
		total := 0
		for _, n := range rows {
			w := mlx.FromSlice(randF32(r, n*256), n, 256)
			wq, s, b, err := mlx.Quantize(w, 64, 4)
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, mlx.NewQuantMatrix(wq, s, b, 64, 4))
			ws = append(ws, w)
			total += n
		}
		joinedW := mlx.Concatenate(ws, 0)
		wq, s, b, err := mlx.Quantize(joinedW, 64, 4)
		if err != nil {
			t.Fatal(err)
		}
		joined := mlx.NewQuantMatrix(wq, s, b, 64, 4)
		mlx.Free(joined.Pack()...)
		fused := mlx.PackedQuantMatrices(parts)
		splitsTile := false
		for _, n := range rows[:len(rows)-1] {
			splitsTile = splitsTile || n%kernels.PackedQ4TileRows != 0
		}
		switch {
		case splitsTile && fused != nil:
			t.Errorf("rows %v: packed parts that split a tile", rows)
		case !splitsTile && fused == nil:
			t.Errorf("rows %v: parts not packed", rows)
		case fused != nil:
			if gr, gc := fused.Dims(); gr != total || gc != 256 {
				t.Errorf("rows %v: fused dims [%d, %d], want [%d, 256]", rows, gr, gc, total)
			}
			got, want := cb(fused.Arrays()[0]).data.([]uint8), cb(joined.Arrays()[0]).data.([]uint8)
			if !bytes.Equal(got, want) {
				t.Errorf("rows %v: fused packing differs from the joined matrix packed", rows)
			}
			mlx.Free(fused.Arrays()...)
		}
		for _, p := range parts {
			mlx.Free(p.Arrays()...)
		}
		mlx.Free(joined.Arrays()...)
		mlx.Free(ws...)
		joinedW.Free()
	}
}
