package kernels

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// PackQ4 writes every byte of dst whatever it held (the padding rows of a
// last partial tile included), and packing in parallel tiles gives the
// bytes a single pass over a zeroed buffer gives, for row counts that do
// and do not fill the last tile and matrices large enough to be split.
func TestPackQ4OverwritesAndSplits(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, rows := range []int{1, 5, 1023, 1024, 1030} {
		const cols, gs = 256, 64
		w := make([]uint32, rows*cols/8)
		for i := range w {
			w[i] = r.Uint32()
		}
		scales, biases := randSlice(r, rows*cols/gs), randSlice(r, rows*cols/gs)
		n := PackedQ4Bytes(rows, cols, gs)
		zero, dirty := make([]byte, n), bytes.Repeat([]byte{0xA5}, n)
		if _, err := PackQ4(w, scales, biases, rows, cols, gs, dirty); err != nil {
			t.Fatal(err)
		}
		// the reference: tile by tile on one goroutine, into zeros
		tb := pq4TileBytes(cols, gs)
		for t0 := 0; t0 < rows; t0 += pq4TileRows {
			t1 := min(t0+pq4TileRows, rows)
			if _, err := PackQ4(w[t0*cols/8:t1*cols/8], scales[t0*cols/gs:t1*cols/gs], biases[t0*cols/gs:t1*cols/gs], t1-t0, cols, gs, zero[t0/pq4TileRows*tb:(t0/pq4TileRows+1)*tb]); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(dirty, zero) {
			t.Fatalf("rows %d: packing into a used buffer differs from tile-by-tile packing", rows)
		}
	}
}
