package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestHMatmulTileSplit shrinks the tile bound so the tiled product splits
// W into several tiles (even ones, one row each, a row longer than the
// bound) and checks each split against the float64 reference: the split
// must cover every row of W exactly once, accumulating along k for x @ W.
func TestHMatmulTileSplit(t *testing.T) {
	withoutAMX(t) // the float32 paths, to their bound
	defer func(v int, h bool) { hmmTileElems, useHGemm = v, h }(hmmTileElems, useHGemm)
	useHGemm = false // the tiles, not the 16-bit panels that replace them on AVX-512
	r := rand.New(rand.NewPCG(13, 17))
	m := hmmGemmMinM + 3
	for _, bound := range []int{1, 50, 700, 1 << 20} {
		hmmTileElems = bound
		for _, sh := range [][2]int{{33, 65}, {100, 37}, {16, 48}} {
			k, n := sh[0], sh[1]
			for _, transB := range []bool{true, false} {
				x, w := randSlice(r, m*k), randHalf(r, k*n, BF16)
				want, mag := refHMatmul(x, m, k, n, w, BF16, transB)
				out := make([]float32, m*n)
				if err := HMatmul(x, m, k, n, w, BF16, transB, out); err != nil {
					t.Fatal(err)
				}
				assertClose(t, fmt.Sprintf("bound=%d/%dx%d/transB=%v", bound, k, n, transB), out, want, mag, float64(k+2)*0x1p-24)
			}
		}
	}
}

// TestHMatmulTileRows: tiles stay within the bound (unless one row alone
// exceeds it), are as few as the bound allows, and cover all rows.
func TestHMatmulTileRows(t *testing.T) {
	defer func(v int) { hmmTileElems = v }(hmmTileElems)
	for _, c := range []struct{ bound, total, rowLen int }{
		{5 << 20, 4864, 896}, {5 << 20, 896, 4864}, {5 << 20, 151936, 896}, {2 << 20, 4864, 896},
		{100, 7, 1000}, {64, 10, 3}, {25, 7, 10}, {1, 1, 1}, {30, 1, 30},
	} {
		hmmTileElems = c.bound
		rows := hmmTileRows(c.total, c.rowLen)
		tiles := (c.total + rows - 1) / rows
		most := max(1, c.bound/c.rowLen)
		minTiles := (c.total + most - 1) / most
		switch {
		case rows < 1 || rows > c.total:
			t.Errorf("%+v: %d rows per tile", c, rows)
		case c.rowLen <= c.bound && rows*c.rowLen > c.bound:
			t.Errorf("%+v: a tile of %d rows holds %d values", c, rows, rows*c.rowLen)
		case c.rowLen <= c.bound && tiles > minTiles:
			t.Errorf("%+v: %d tiles of %d rows, %d would do", c, tiles, rows, minTiles)
		}
	}
}
